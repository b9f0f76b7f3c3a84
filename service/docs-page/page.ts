/** The reference page's own files: the HTML shell, the script that starts Swagger UI on the document, and a few style rules. */

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Job Listings API reference</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="stylesheet" href="/docs/reference.css">
</head>
<body>
  <main id="reference" aria-label="Job Listings API reference"></main>
  <noscript>This page needs JavaScript. The same contract is at <a href="/docs/openapi.json">/docs/openapi.json</a>.</noscript>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/reference.js"></script>
</body>
</html>
`;

// No validator (validatorUrl: null): Swagger UI would otherwise send the document to another host.
// deepLinking stays off: it puts an anchor inside each operation's button (nested controls).
// nord: its colours pass AA on the darker ground below; the default theme's numbers do not.
// The servers list's <label> is empty: the select gets its name once rendered (onComplete).
export const PAGE_SCRIPT = `"use strict";
window.ui = SwaggerUIBundle({
  url: "/docs/openapi.json",
  dom_id: "#reference",
  validatorUrl: null,
  displayRequestDuration: true,
  defaultModelsExpandDepth: 1,
  syntaxHighlight: { theme: "nord" },
  onComplete: function () {
    var servers = document.getElementById("servers");
    if (servers) servers.setAttribute("aria-label", "Server");
  }
});
`;

// Swagger UI's white-on-pastel method badges and pale text fall short of WCAG AA contrast (4.5:1).
export const PAGE_STYLE = `body { margin: 0; }
.swagger-ui .opblock .opblock-summary-method { color: #111; text-shadow: none; }
.swagger-ui .opblock.opblock-head .opblock-summary-method { color: #fff; }
.swagger-ui .info .url, .swagger-ui .info a { color: #1f5fa8; }
.swagger-ui .info .title small pre, .swagger-ui .info .title small.version-stamp pre { color: #111; }
.swagger-ui .btn.authorize { color: #1b6b45; border-color: #1b6b45; }
.swagger-ui .btn.authorize svg { fill: #1b6b45; }
.swagger-ui .json-schema-2020-12-expand-deep-button { color: #444; }
.swagger-ui .parameter__in, .swagger-ui .parameter__deprecated { color: #555; }
.swagger-ui .microlight { background: #1f232a !important; }
.swagger-ui .highlight-code > .microlight { max-height: none; overflow: visible; white-space: pre-wrap; overflow-wrap: anywhere; }
`;
