"""One dispatch between the host's calls and the engine's methods.

As pluggy keeps a hook's specification, its implementations and the call
between them apart, so does the engine: ``host_contract`` is the
specification (what Hermes and Stowage's own glue call), the engine's
methods are the implementation and name only the parameters they use, and
this module is the call.  Every host-facing method passes through
:func:`host_call`, which

* routes the call to the calling agent's guest engine where one object
  serves several agents (hosts before 0.18.0, ``shared_engine``), for the
  methods that are routed, and
* passes the method only the keywords its signature names: hosts add
  keywords over time (0.20 passes ``feasibility_skip`` to
  ``record_completed_compaction``), and an override that refuses one raises
  TypeError inside the host's loop.  A keyword left out is logged at debug.

What the host sees is the method's signature plus ``**host_keywords`` (the
wrapper's ``__signature__``): 0.20+ filter ``compress()``'s keywords by that
signature, and a host passing one more keyword finds it open-ended.
The plugin hooks (``host/registration.py``) go through :func:`host_call` too.
"""

from __future__ import annotations

import functools
import inspect
import logging
from typing import Any, Callable, Collection, TypeVar

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

_OPEN = inspect.Parameter("host_keywords", inspect.Parameter.VAR_KEYWORD)


def host_call(method: F, *, routed: bool = False) -> F:
    """``method`` as the host calls it: keywords matched to its signature, routed to a guest engine if ``routed``."""
    signature = inspect.signature(method)
    takes_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    named = frozenset(
        p.name for p in signature.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    )

    def matched(kwargs: dict[str, Any]) -> dict[str, Any]:
        if takes_any or kwargs.keys() <= named:
            return kwargs
        logger.debug(
            "stowage: %s() leaves out keywords it does not take: %s", method.__name__, sorted(kwargs.keys() - named)
        )
        return {key: value for key, value in kwargs.items() if key in named}

    if routed:

        @functools.wraps(method)
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            target = self.sharing.engine_here(self)
            if target is not self:
                return getattr(target, method.__name__)(*args, **kwargs)
            return method(self, *args, **matched(kwargs))

    else:

        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            return method(*args, **matched(kwargs))

    parameters = list(signature.parameters.values())
    if not takes_any:
        parameters.append(_OPEN)
    call.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return call  # type: ignore[return-value]


def host_dispatch(*, routed: Collection[str], local: Collection[str]) -> Callable[[C], C]:
    """Wrap a class's host-facing methods with :func:`host_call`: ``routed`` reach the calling agent's guest
    engine, ``local`` run on the object called.  A name the class does not define fails at import."""

    def wrap(cls: C) -> C:
        for name in (*routed, *local):
            method = vars(cls).get(name)
            if not callable(method):
                raise TypeError(f"{cls.__name__} has no method {name} to dispatch")
            setattr(cls, name, host_call(method, routed=name in routed))
        return cls

    return wrap
