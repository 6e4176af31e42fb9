"""Type stubs of strads._progress."""

from typing import Any, Callable, Optional

_Callback = Optional[Callable[[dict[str, Any]], object]]

def progress(callback: _Callback, verbose: object, what: str) -> _Callback: ...
