// placeholder: filled in by the pool_lifetimes work (issues 21, 22)
