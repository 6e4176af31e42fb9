"""Shared by the benchmark scripts: the machine and the commit a result was measured on."""

import os
import platform
import subprocess


def machine():
    cpu = None
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        cpu = next((l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name")), None)
    except OSError:
        pass
    if not cpu:
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
                   platform.processor())
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def commit():
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    status = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True).stdout.splitlines()
    # Results written by earlier runs of the benchmarks are not changes to what is measured.
    changed = [l for l in status if not l[3:].startswith("bench/results/")]
    return f"{head} dirty" if changed else head
