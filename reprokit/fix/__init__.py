"""From diagnosis to fix: what keeps FlashInfer's failing tactics from being tried, and the fit table behind it."""
