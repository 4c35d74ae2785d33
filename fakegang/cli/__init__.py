"""The `fakegang` command, one module per subcommand group."""
