"""Resident memory (VmRSS) of a gunicorn master's workers, read from /proc, and how it grew.

Growth is measured per worker from the first sample at or after the warm-up to the last sample; a worker
that appears after the first sample replaced one that died.
"""

from __future__ import annotations

from pathlib import Path

from bench.tables import markdown


def children(pid: int) -> list[int]:
    """Direct children of `pid` (gunicorn's workers are children of its master)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
        return sorted(int(item) for item in text.split())
    except OSError:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # pid (comm) state ppid …; comm may hold spaces and parentheses, so split after the last ')'
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
        return sorted(found)


def rss_kb(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def sample_memory(master: int, elapsed: float) -> dict:
    workers = {str(pid): rss_kb(pid) for pid in children(master)}
    return {
        "t": round(elapsed, 1),
        "master_kb": rss_kb(master),
        "workers_kb": {pid: kb for pid, kb in workers.items() if kb is not None},
    }


def summarize(samples: list[dict], warmup: float) -> dict:
    """Per worker: RSS at the warm-up, at the end, its peak and growth; replaced workers; all samples."""
    warm = next((sample for sample in samples if sample["t"] >= warmup), samples[0])
    end = samples[-1]
    workers = {}
    for pid, start_kb in warm["workers_kb"].items():
        end_kb = end["workers_kb"].get(pid)
        workers[pid] = {
            "warm_kb": start_kb,
            "end_kb": end_kb,
            "growth_pct": round(100 * (end_kb - start_kb) / start_kb, 2) if end_kb else None,
            "peak_kb": max(sample["workers_kb"].get(pid, 0) for sample in samples),
        }
    pids_seen = sorted({pid for sample in samples for pid in sample["workers_kb"]})
    replaced = sorted(set(pids_seen) - set(samples[0]["workers_kb"]))
    return {
        "warm_sample_t": warm["t"],
        "end_sample_t": end["t"],
        "workers": workers,
        "replaced_workers": replaced,
        "max_growth_pct": max(
            (row["growth_pct"] for row in workers.values() if row["growth_pct"] is not None), default=None
        ),
        "samples": samples,
    }


def table(memory: dict) -> str:
    rows = [
        (
            f"worker {pid}",
            f"{row['warm_kb'] / 1024:.1f}",
            f"{row['end_kb'] / 1024:.1f}" if row["end_kb"] else "–",
            f"{row['peak_kb'] / 1024:.1f}",
            f"{row['growth_pct']:+.1f} %" if row["growth_pct"] is not None else "–",
        )
        for pid, row in memory["workers"].items()
    ]
    return markdown(
        rows,
        (
            "process",
            f"RSS MiB at {memory['warm_sample_t']:.0f} s",
            f"RSS MiB at {memory['end_sample_t']:.0f} s",
            "peak MiB",
            "growth",
        ),
    )
