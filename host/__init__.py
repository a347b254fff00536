"""The Hermes side of Stowage: everything that knows the host.

The engine adapter, ``register(ctx)``'s body, the ``/stowage`` command, the
manifest generator and the host-version checks live here; the core packages
beside this one (``context_engine``, ``blobstore``, ``tool_search``) never
import Hermes.  Modules reach the core with relative imports (``..context_engine``)
so the tree works under whatever name the host imports the plugin.
"""
