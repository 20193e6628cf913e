"""The image catalog (catalog.yaml) and the small programs that play service images."""
