// Starts Swagger UI on the API's documentation page with the configuration the page
// carries as JSON (templates/swagger_ui.html): a static file, so that the page runs
// under a Content-Security-Policy without inline script.
"use strict";
window.addEventListener("load", function () {
  var config = JSON.parse(document.getElementById("swagger-ui-config").textContent);
  window.ui = SwaggerUIBundle(config);
});
