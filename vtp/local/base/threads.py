"""The threads a resource service starts for the work it drives, joined when it closes."""

import threading
from collections.abc import Callable


class Workers:
    """Daemon threads, one per piece of work (a study, a training pipeline); `join` waits for
    those still running (they end once the service's `closing` is set)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def start(self, name: str, target: Callable[..., object], *args: object) -> None:
        """Run `target(*args)` in a new thread called `name`."""
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def join(self) -> None:
        """Wait for every thread started so far."""
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join()
