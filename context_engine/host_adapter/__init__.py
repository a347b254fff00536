"""The host adapter, top floor of the engine: the host contract's members mapped onto the session
(keyword tolerance, routing between agents, the engine's own tools)."""
