"""Every GPU busy: a CUDA campaign's workers spread over the host's GPUs, and their use sampled.

With ``--device cuda`` worker ``k`` runs with ``CUDA_VISIBLE_DEVICES`` set to one entry of
:func:`visible_gpus` (``k`` mod their number), so that inside it ``cuda`` is that one GPU; a
restarted worker keeps its entry (:class:`~aliasfuzz.campaign.worker.Worker` keeps its
``env``). Without ``--workers`` a CUDA campaign starts :func:`default_workers`: cores per
GPU, at most 4 per GPU (on a one-GPU host the CPU default, ``min(4, cores)``).

While such a campaign runs, :class:`GpuSampler` reads each GPU's utilization and used
memory through NVML (``pynvml``, the package ``torch.cuda.utilization`` uses) every
:data:`SAMPLE_EVERY` seconds in a daemon thread; :meth:`GpuSampler.stop` gives one row per
GPU (:func:`merge_rows` joins the rows of a resumed campaign's runs). Without ``pynvml``
(or when NVML fails) the rows say ``samples: 0``, "not measured"; a sampling error never
fails the campaign.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = [
    "SAMPLE_EVERY",
    "GpuSampler",
    "default_workers",
    "format_row",
    "merge_rows",
    "nvml_reader",
    "visible_gpus",
    "worker_gpu",
]

#: Seconds between two samples of every GPU.
SAMPLE_EVERY = 2.0

#: Workers per GPU at most by default (the CPU default's cap, per GPU).
MAX_DEFAULT_PER_GPU = 4

#: ``read(slot) -> (utilization percent, used memory MiB)`` of GPU ``slot`` of the campaign.
Reader = Callable[[int], tuple[float, float]]


def gpu_count() -> int:
    """GPUs this process sees (``torch.cuda.device_count()``, which honours
    ``CUDA_VISIBLE_DEVICES`` and creates no CUDA context); 0 without CUDA."""
    import torch

    return torch.cuda.device_count()


def visible_gpus() -> list[str]:
    """The ``CUDA_VISIBLE_DEVICES`` entries a CUDA campaign spreads its workers over, one per
    GPU of :func:`gpu_count`: the entries of this process' own ``CUDA_VISIBLE_DEVICES``
    when it is set (indices or UUIDs, kept as written), else ``"0"`` .. ``"N-1"``."""
    n = gpu_count()
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is None:
        return [str(i) for i in range(n)]
    # CUDA stops at the first invalid entry, so the first n are the ones it counted
    return [e.strip() for e in listed.split(",") if e.strip()][:n]


def default_workers(device: str, cores: int | None = None, gpus: int | None = None) -> int:
    """Worker processes of a campaign without ``--workers``: ``min(4, cores)`` on CPU and
    on a host of one GPU; with ``N`` GPUs, ``N`` times ``cores // N`` capped at 4 (at least
    one per GPU), so that each GPU gets its share of the cores. ``cores`` and ``gpus``
    default to this host's (``os.cpu_count()``, :func:`gpu_count`)."""
    cores = max(1, cores if cores is not None else os.cpu_count() or 1)
    n = max(1, (gpus if gpus is not None else gpu_count()) if device == "cuda" else 1)
    return n * max(1, min(MAX_DEFAULT_PER_GPU, cores // n))


def worker_gpu(k: int, gpus: Sequence[str]) -> dict[str, str]:
    """The environment that puts worker ``k`` on its GPU: ``{"CUDA_VISIBLE_DEVICES":
    gpus[k % len(gpus)], "CUDA_DEVICE_ORDER": ...}``; empty without GPUs (the worker sees
    what its parent sees).

    ``CUDA_DEVICE_ORDER`` is this process' own, or ``PCI_BUS_ID`` when it has none: CUDA
    numbers GPUs fastest first by default, NVML (:func:`nvml_reader`) in PCI bus order, and
    on a host of mixed GPUs index ``i`` would then be two different GPUs, the worker's and
    the one whose utilization its row shows."""
    if not gpus:
        return {}
    return {"CUDA_VISIBLE_DEVICES": gpus[k % len(gpus)],
            "CUDA_DEVICE_ORDER": os.environ.get("CUDA_DEVICE_ORDER", "PCI_BUS_ID")}


def nvml_reader(gpus: Sequence[str]) -> tuple[list[str], Reader] | None:
    """GPU names and a :data:`Reader` over NVML for the ``CUDA_VISIBLE_DEVICES`` entries
    ``gpus``, or None when ``pynvml`` is missing or NVML cannot start or find one of them.
    An entry is an NVML index or a UUID, as in ``CUDA_VISIBLE_DEVICES``; NVML counts in PCI
    bus order, as ``torch.cuda.utilization`` assumes too (``torch/cuda/__init__.py``
    ``_get_nvml_device_index``), and so do the workers (:func:`worker_gpu`). When this
    process' ``CUDA_DEVICE_ORDER`` is another order and an entry is an index, the index
    names another GPU in NVML than in CUDA: None (not measured, rather than another GPU's
    figures)."""
    order = os.environ.get("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    if order != "PCI_BUS_ID" and any(e.isdigit() for e in gpus):
        return None
    try:
        import pynvml

        pynvml.nvmlInit()
        handles = [pynvml.nvmlDeviceGetHandleByIndex(int(e)) if e.isdigit()
                   else pynvml.nvmlDeviceGetHandleByUUID(e) for e in gpus]
        names = [pynvml.nvmlDeviceGetName(h) for h in handles]
    except Exception:  # no package, no driver, a MIG or unknown entry: not measured
        return None

    def read(slot: int) -> tuple[float, float]:
        h = handles[slot]
        util = pynvml.nvmlDeviceGetUtilizationRates(h).gpu
        return float(util), pynvml.nvmlDeviceGetMemoryInfo(h).used / 2**20

    return [n.decode() if isinstance(n, bytes) else str(n) for n in names], read


class GpuSampler:
    """Samples the campaign's GPUs every ``every`` seconds in a daemon thread.

    ``gpus``: the ``CUDA_VISIBLE_DEVICES`` entries (:func:`visible_gpus`); ``workers``: the
    number of workers on each; ``reader``: names and a :data:`Reader`, or None (not
    measured); by default :func:`nvml_reader` of ``gpus``. A read that raises is skipped
    (that GPU's sample is missing); nothing here raises into the campaign.
    """

    def __init__(self, gpus: Sequence[str], workers: Sequence[int], *,
                 reader: tuple[list[str], Reader] | None | str = "nvml",
                 every: float = SAMPLE_EVERY):
        self.gpus, self.workers, self.every = list(gpus), list(workers), every
        if reader == "nvml":
            reader = nvml_reader(self.gpus)
        self.names, self._read = reader if reader is not None else ([None] * len(gpus), None)
        self._util: list[list[float]] = [[] for _ in self.gpus]
        self._mem: list[float] = [0.0 for _ in self.gpus]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="gpu-sampler", daemon=True)

    def start(self) -> GpuSampler:
        if self._read is not None and self.gpus:
            self._thread.start()
        return self

    def sample(self) -> None:
        """Read every GPU once."""
        for slot in range(len(self.gpus)):
            try:
                util, mem = self._read(slot)
            except Exception:  # NVML hiccup, GPU lost: a missing sample, not a failure
                continue
            self._util[slot].append(util)
            self._mem[slot] = max(self._mem[slot], mem)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def stop(self) -> list[dict[str, Any]]:
        """End the sampling; one row per GPU: ``index`` (in the campaign's
        ``CUDA_VISIBLE_DEVICES`` order), ``device`` (its entry), ``name``, ``workers``,
        ``util_mean_percent``, ``util_max_percent``, ``mem_max_mib`` (None when never
        sampled) and ``samples``. A campaign shorter than one period gets one sample here."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        if self._read is not None and not any(self._util):
            self.sample()
        rows = []
        for slot, entry in enumerate(self.gpus):
            u = self._util[slot]
            rows.append({
                "index": slot, "device": entry, "name": self.names[slot],
                "workers": self.workers[slot] if slot < len(self.workers) else 0,
                "util_mean_percent": round(sum(u) / len(u), 1) if u else None,
                "util_max_percent": max(u) if u else None,
                "mem_max_mib": round(self._mem[slot]) if u else None,
                "samples": len(u),
            })
        return rows


def merge_rows(runs: Iterable[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per GPU index from the rows of several runs of one campaign (a resumed
    campaign journals one list per run): means weighted by samples, maxima of maxima, the
    most workers any run had on it."""
    out: dict[int, dict[str, Any]] = {}
    for rows in runs:
        for r in rows:
            m = out.get(r["index"])
            if m is None:
                out[r["index"]] = dict(r)
                continue
            n, k = m["samples"], r["samples"]
            if k:
                mean = ((m["util_mean_percent"] or 0.0) * n + r["util_mean_percent"] * k) / (n + k)
                m["util_mean_percent"] = round(mean, 1)
                m["util_max_percent"] = max(m["util_max_percent"] or 0, r["util_max_percent"])
                m["mem_max_mib"] = max(m["mem_max_mib"] or 0, r["mem_max_mib"])
            m["samples"] = n + k
            m["workers"] = max(m["workers"], r["workers"])
            m["name"] = m["name"] or r["name"]
    return [out[i] for i in sorted(out)]


def format_row(row: dict[str, Any]) -> str:
    """The console summary's line for one GPU row (:meth:`GpuSampler.stop`)."""
    name = f" {row['name']}" if row.get("name") else ""
    n = row["workers"]
    head = (f"gpu {row['index']}{name} (CUDA_VISIBLE_DEVICES={row['device']}): {n} "
            f"worker{'' if n == 1 else 's'}")
    if not row["samples"]:
        return f"{head}, utilization not measured (no pynvml or NVML failed)"
    return (f"{head}, utilization mean {row['util_mean_percent']:.0f}% max "
            f"{row['util_max_percent']:.0f}%, memory max {row['mem_max_mib']} MiB "
            f"({row['samples']} samples)")
