// Keyboard shortcuts (filled in by the labeling pages).
