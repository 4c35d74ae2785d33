"""Chat models and prompting: the clients (local, fake, expert, Bedrock, any provider), the two LLM
calls and how their answers are read."""
