// placeholder: filled in by the memory_safety work (issues 21, 22)
