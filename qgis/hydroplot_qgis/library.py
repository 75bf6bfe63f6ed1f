"""One algorithm run's use of the hydroplot Python package: a
:class:`hydroplot.Context` whose progress and log lines go to the
Processing feedback, whose calls a Cancel stops, and whose errors become
:class:`QgsProcessingException` with the library's own message.

The plugin never checks or computes what the library does: values go to the
package as given, and what it refuses is reported in its words.
"""

import contextlib
import threading

import hydroplot
from qgis.core import QgsProcessingException

#: How often the watcher looks at the Cancel button, in seconds: a cancel
#: reaches the library within this, and the library ends its calls within a
#: few hundredths of a second after.
CANCEL_POLL_S = 0.05


def parse_options(text):
    """``"key=value; key=value"`` (the advanced "Context options" parameter)
    as a dict; keys and values are the library's context options and are
    checked by it."""
    options = {}
    for item in (text or "").replace("\n", ";").split(";"):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise QgsProcessingException(f"Context options: {item.strip()!r} is not key=value")
        options[key.strip()] = value.strip()
    return options


class LibraryRun:
    """A context for one algorithm run, wired to ``feedback`` (a
    ``QgsProcessingFeedback``, or None). Owns the context; the run's calls go
    through :meth:`call`. Not shared between threads."""

    def __init__(self, feedback, options=None):
        self.feedback = feedback
        try:
            self.context = hydroplot.Context(**(options or {}))
        except hydroplot.HydroplotError as e:
            raise QgsProcessingException(e.message) from None
        self._stage = None
        if feedback is not None:
            self.context.set_progress_callback(self._progress)
            self.context.set_log_callback(self._log)

    def call(self, fn, *args, **kwargs):
        """``fn(*args, context=..., **kwargs)`` (a hydroplot function) with
        the Cancel button watched: once it is pressed the context is
        cancelled, again and again until ``fn`` returns (a cancel reaches
        only the calls begun before it). Errors as :func:`reported` says."""
        done = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(done,), name="hydroplot-cancel-watch", daemon=True)
        watcher.start()
        try:
            with reported():
                return fn(*args, context=self.context, **kwargs)
        finally:
            done.set()
            watcher.join()

    def _watch(self, done):
        while not done.wait(CANCEL_POLL_S):
            if self.feedback is not None and self.feedback.isCanceled():
                self.context.cancel()

    def _progress(self, stage, done, total):
        if stage != self._stage:
            self._stage = stage
            self.feedback.setProgressText(stage)
        if total:
            self.feedback.setProgress(100.0 * min(done, total) / total)

    def _log(self, level, message):
        if level <= 1:
            self.feedback.reportError(message)
        elif level == 2:
            self.feedback.pushWarning(message)
        elif level == 3:
            self.feedback.pushInfo(message)
        else:
            self.feedback.pushDebugInfo(message)


@contextlib.contextmanager
def reported():
    """Turns the library's errors, and the argument errors the package
    raises (TypeError, ValueError naming the argument), into
    QgsProcessingException with their message, never a traceback."""
    try:
        yield
    except hydroplot.HydroplotError as e:
        raise QgsProcessingException(error_text(e)) from None
    except (TypeError, ValueError) as e:
        raise QgsProcessingException(str(e)) from None


def error_text(error):
    """A :class:`hydroplot.HydroplotError` as the user reads it: the
    library's message (its status name only when the message is empty)."""
    return error.message or error.name
