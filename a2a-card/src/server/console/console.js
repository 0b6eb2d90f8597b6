// The operators' console: a running task's page refreshes its live part (status, history,
// journal, messages, artifacts) until the task ends. Nothing else runs here.
"use strict";
(function () {
  var live = document.getElementById("live");
  if (!live) return;
  var every = parseInt(live.getAttribute("data-refresh-ms"), 10) || 2000;
  function refresh() {
    var current = document.getElementById("live");
    if (!current || current.getAttribute("data-running") !== "true") return;
    // Not while the operator is using a control inside it (the cancel button, say).
    if (current.contains(document.activeElement) && document.activeElement !== document.body) {
      setTimeout(refresh, every);
      return;
    }
    var url = location.pathname + "?part=live";
    fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html) {
          var next = new DOMParser().parseFromString(html, "text/html").getElementById("live");
          if (next) current.replaceWith(document.importNode(next, true));
        }
        setTimeout(refresh, every);
      })
      .catch(function () { setTimeout(refresh, every * 2); });
  }
  setTimeout(refresh, every);
})();
