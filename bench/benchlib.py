"""Shared by the benchmark scripts: the machine and the commit a result was measured on, writing a result
file, and their plots."""

import os
import platform
import subprocess
import tempfile


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


def write_report(path, text):
    """Writes a result file through a temporary file and a rename, so a stopped run leaves no half of it."""
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    print(f"written to {path}")


def plot_traces(strads, folder, runs, image, y=None, title=None):
    """Writes each run's trace as folder/NN/trace.csv and draws them all with `strads plot`.

    runs: (label, columns, rows) per curve, the columns named as strads' traces name them (seconds, and
    round or iteration, then the plotted column), so strads' and the peers' curves share one plot.
    Returns the image's path, or None when strads is not there to draw it.
    """
    if not strads or not os.path.exists(strads) or not runs:
        return None
    os.makedirs(folder, exist_ok=True)
    dirs, labels = [], []
    for i, (label, columns, rows) in enumerate(runs):
        d = os.path.join(folder, f"{i:02d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "trace.csv"), "w") as f:
            f.write(",".join(columns) + "\n")
            for row in rows:
                f.write(",".join("" if v is None else str(v) for v in row) + "\n")
        dirs.append(d)
        labels.append(label.replace(",", ";"))
    cmd = [strads, "plot", *dirs, "-o", image, "--labels", ",".join(labels)]
    if y:
        cmd += ["--y", y]
    if title:
        cmd += ["--title", title]
    subprocess.run(cmd, check=True)
    return image


def plot_gap_curves(strads, say, curves, image, title):
    """Each method's duality gap against seconds (one point per fit at one of its tolerances), drawn
    with `strads plot` into `image`; says the image's markdown line. curves: (label, [(seconds, gap)])."""
    folder = os.path.join(tempfile.gettempdir(), f"strads-gap-plot-{os.getpid()}-{os.path.basename(image)}")
    drawn = plot_traces(strads, folder,
                        [(label, ["seconds", "duality_gap"], sorted(points)) for label, points in curves if points],
                        image, y="duality_gap", title=title)
    if drawn:
        say(f"![duality gap against seconds, one point per fit at one tolerance]({os.path.basename(drawn)})")
        say()
