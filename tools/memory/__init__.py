"""The agent's memory database: tables, the episode row, and the file check."""
