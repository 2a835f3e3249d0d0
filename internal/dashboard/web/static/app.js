// Flotilla dashboard: keeps the page's content current with server-sent events. The server
// renders the content again when the hub changes and sends it whole; nothing polls.
(function () {
  "use strict";
  var live = document.getElementById("live");
  var status = document.getElementById("live-status");
  if (!live || !window.EventSource) {
    return;
  }
  var page = live.getAttribute("data-page") || location.pathname + location.search;
  if (page.indexOf("/diff/") >= 0) {
    return; // a diff is read from the cluster once, not live
  }
  var source = new EventSource("/events?page=" + encodeURIComponent(page));
  source.addEventListener("page", function (e) {
    var focused = document.activeElement && document.activeElement.id;
    live.innerHTML = e.data;
    live.setAttribute("data-updated", String(Date.now()));
    if (focused) {
      var el = document.getElementById(focused);
      if (el) { el.focus(); }
    }
    status.textContent = "Live";
  });
  source.onerror = function () {
    status.textContent = "Reconnecting…";
  };
})();
