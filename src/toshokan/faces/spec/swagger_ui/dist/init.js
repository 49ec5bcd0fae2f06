// Starts Swagger UI on the host's OpenAPI document. A file rather than an inline script, so a
// Content-Security-Policy without 'unsafe-inline' still allows it. validatorUrl is off: the
// default sends the document to validator.swagger.io, and the docs must work with no internet.
window.ui = SwaggerUIBundle({
  url: document.getElementById("swagger-ui").dataset.openapi,
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
});
