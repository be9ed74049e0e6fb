// Placeholder: the HTTP layer is being written.
