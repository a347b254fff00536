"""The summary model's side, above chat: what is sent to it (the masked transcript, the prompt, the
egress gate), what comes back (checked, grounded), the fallback without a model, and its deadline."""
