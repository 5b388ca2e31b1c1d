/**
 * The check-in page's own script. The page works without it: a typed code, or one a USB scanner types
 * followed by Enter, is a plain form post. It never touches `document.modelContext` (the WebMCP
 * runtime, django_webmcp/static/webmcp/webmcp.js, is the only code that does).
 *
 * - After each answer to the ticket form the field is emptied, and focused again if it had the focus,
 *   ready for the next scan.
 * - After an agent's check-in (the runtime swaps the answer in and says `webmcp:shown`), the counts
 *   and the list are drawn again, as after a person's (htmx, `door-changed`).
 * - The camera: the rear camera (getUserMedia), its frames read by the browser's BarcodeDetector where
 *   it reads QR codes, else by jsQR, our own static copy (static-build/, `make`), loaded on first use.
 *   A code read goes into the ticket field and the form is submitted, as if typed. The same code is
 *   not sent again while it stays in front of the camera.
 */

const CHANGED = "door-changed";
const FRAME_MS = 120; // about eight frames a second: enough to read a code, little battery
const PAUSE_MS = 1500; // after a code is sent, while the answer is read
const GONE_MS = 2000; // a code out of sight this long may be sent again
const MAX_WIDTH = 800; // frames are read at most this wide

const form = document.getElementById("scan-form");
const field = document.getElementById("ticket-code");

// ---- the ticket form -------------------------------------------------------------------------

let refocus = false;
form?.addEventListener("submit", () => {
  refocus = document.activeElement === field;
});
document.body.addEventListener("htmx:afterRequest", (event) => {
  if (event.detail.elt !== form) return;
  form.reset();
  if (refocus) field.focus();
});

// ---- an agent's check-in ---------------------------------------------------------------------

const counted = new WeakSet();
document.addEventListener("webmcp:shown", () => {
  const answer = document.querySelector("#door-answer[data-door-changed]");
  if (!answer || counted.has(answer)) return;
  counted.add(answer);
  window.htmx?.trigger(document.body, CHANGED);
});

// ---- the camera --------------------------------------------------------------------------------

const box = document.getElementById("door-camera");
const toggle = document.getElementById("camera-toggle");
const video = document.getElementById("camera-video");
const status = document.getElementById("camera-status");
let stream = null;
let timer = 0;
let sent = { code: "", seenAt: 0 };

function say(key) {
  status.textContent = key ? box.dataset[key] ?? "" : "";
}

/** A function reading one frame of `video`: the code it shows, or null. */
async function reader() {
  if ("BarcodeDetector" in window) {
    try {
      const formats = await window.BarcodeDetector.getSupportedFormats();
      if (formats.includes("qr_code")) {
        const detector = new window.BarcodeDetector({ formats: ["qr_code"] });
        return async () => (await detector.detect(video))[0]?.rawValue ?? null;
      }
    } catch (error) {
      console.warn("door: no BarcodeDetector for QR codes", error);
    }
  }
  await import(box.dataset.decoder); // a UMD script: it defines self.jsQR
  const decode = self.jsQR;
  const canvas = document.createElement("canvas");
  const context = canvas.getContext("2d", { willReadFrequently: true });
  return async () => {
    const scale = Math.min(1, MAX_WIDTH / video.videoWidth);
    canvas.width = Math.round(video.videoWidth * scale);
    canvas.height = Math.round(video.videoHeight * scale);
    context.drawImage(video, 0, 0, canvas.width, canvas.height);
    const frame = context.getImageData(0, 0, canvas.width, canvas.height);
    return decode(frame.data, frame.width, frame.height, { inversionAttempts: "dontInvert" })?.data ?? null;
  };
}

function send(code) {
  field.value = code;
  refocus = false;
  form.requestSubmit(); // htmx posts it, as a typed code; without htmx the page is posted
}

async function start() {
  toggle.disabled = true;
  try {
    stream = await navigator.mediaDevices.getUserMedia({
      audio: false,
      video: { facingMode: { ideal: "environment" }, width: { ideal: 1280 }, height: { ideal: 720 } },
    });
    video.srcObject = stream;
    video.hidden = false;
    await video.play();
    const read = await reader();
    toggle.textContent = box.dataset.stop;
    box.dataset.scanning = "";
    say("looking");
    const tick = async () => {
      if (!stream) return;
      let wait = FRAME_MS;
      try {
        const code = video.readyState >= 2 && video.videoWidth ? await read() : null;
        const now = Date.now();
        if (code && code === sent.code) {
          sent.seenAt = now;
        } else if (code) {
          sent = { code, seenAt: now };
          send(code);
          wait = PAUSE_MS;
        } else if (now - sent.seenAt > GONE_MS) {
          sent = { code: "", seenAt: 0 };
        }
      } catch (error) {
        console.warn("door: could not read a frame", error);
      }
      timer = setTimeout(tick, wait);
    };
    tick();
  } catch (error) {
    console.warn("door: no camera", error);
    stop();
    say(error?.name === "NotAllowedError" ? "denied" : "unavailable");
  } finally {
    toggle.disabled = false;
  }
}

function stop() {
  clearTimeout(timer);
  stream?.getTracks().forEach((track) => track.stop());
  stream = null;
  video.srcObject = null;
  video.hidden = true;
  delete box.dataset.scanning;
  toggle.textContent = box.dataset.start;
  say("");
}

if (box && form && navigator.mediaDevices?.getUserMedia) {
  box.hidden = false;
  toggle.addEventListener("click", () => (stream ? stop() : start()));
  window.addEventListener("pagehide", stop);
}
