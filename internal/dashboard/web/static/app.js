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
  var pending = null;

  // typing says whether the user is in a form field of the content, which an update would reset.
  function typing() {
    var el = document.activeElement;
    return el && live.contains(el) && (el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA");
  }

  function show(html) {
    var focused = document.activeElement && live.contains(document.activeElement) ? document.activeElement.id : "";
    live.innerHTML = html;
    live.setAttribute("data-updated", String(Date.now()));
    if (focused) {
      var el = document.getElementById(focused);
      if (el) { el.focus(); }
    }
  }

  live.addEventListener("focusout", function () {
    if (pending !== null) {
      var html = pending;
      pending = null;
      window.setTimeout(function () { if (!typing()) { show(html); } else { pending = html; } }, 0);
    }
  });

  var source = new EventSource("/events?page=" + encodeURIComponent(page));
  source.addEventListener("page", function (e) {
    status.textContent = "Live";
    if (typing()) {
      pending = e.data; // shown once the user leaves the field
      return;
    }
    show(e.data);
  });
  source.onerror = function () {
    status.textContent = "Reconnecting…";
  };
})();
