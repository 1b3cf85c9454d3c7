// placeholder: filled in by the capture_and_callbacks work (issues 21, 22)
