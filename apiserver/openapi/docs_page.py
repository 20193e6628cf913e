"""/docs: Swagger UI over our own /openapi/v2, served entirely from this server.

The page loads Swagger UI's script and stylesheet from /docs/static/, which serves the files the
`swagger-ui-bundle` package ships (Swagger UI 4, no copy in this repository), and the spec from
/openapi/v2. Nothing is fetched from another host, so the page works in a classroom without
internet access. FastAPI's own /docs would load its assets from a CDN and describe only the few
routes FastAPI serves, not the Kubernetes API, so it is switched off (see app.py).
"""

from __future__ import annotations

from pathlib import Path

STATIC_PREFIX = "/docs/static"


def static_dir() -> Path:
    import swagger_ui_bundle

    return Path(str(swagger_ui_bundle.swagger_ui_path))


PAGE = f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>mini-k8s API</title>
  <link rel="stylesheet" href="{STATIC_PREFIX}/swagger-ui.css">
  <link rel="icon" type="image/png" href="{STATIC_PREFIX}/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="{STATIC_PREFIX}/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({{
      url: "/openapi/v2",
      dom_id: "#swagger-ui",
      deepLinking: true,
      docExpansion: "list",
      validatorUrl: null,
    }});
  </script>
</body>
</html>
"""
