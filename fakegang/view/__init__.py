"""`fakegang view`: a local, read-only trace viewer in the browser."""
