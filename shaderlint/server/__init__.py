"""The shaderlint language server (``shaderlint lsp``): see :mod:`shaderlint.server.server`."""
