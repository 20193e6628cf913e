"""mini-apiserver: the only process that touches storage; everyone else goes through its REST API."""
