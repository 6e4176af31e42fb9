"""Progress reports of a running fit: the callback strads calls with each evaluation's dict."""


def progress(callback, verbose, what):
    """The function a fit calls with each progress point's dict: ``callback``, after a printed line if ``verbose``.

    Ctrl-C during a fit, or an exception the callback raises, ends the fit with that exception."""
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be None or a function of one argument, got {callback!r}")
    if not verbose:
        return callback

    def report(point):
        fields = ", ".join(f"{name}={value:.6g}" if isinstance(value, float) else f"{name}={value}" for name, value in point.items())
        print(f"strads {what}: {fields}", flush=True)
        if callback is not None:
            callback(point)

    return report
