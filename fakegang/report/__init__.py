"""`fakegang report`: data, charts, the network picture and the HTML page."""
