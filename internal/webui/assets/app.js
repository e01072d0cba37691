// flowctl dashboard: live refresh and writes. Plain JS, no framework; the
// pages work without it (static, and writes through the CLI).
(function () {
  'use strict';

  document.documentElement.classList.add('js');

  var DEBOUNCE_MS = 80;
  var refreshing = false;
  var again = false;
  var timer = null;

  function main() { return document.querySelector('main'); }

  function setLive(state, text) {
    var el = document.getElementById('live-state');
    if (!el) { return; }
    el.setAttribute('data-state', state);
    var t = el.querySelector('.live-text');
    if (t && text) { t.textContent = text; }
  }

  // State of <main> that a swap keeps: open <details>, input values,
  // focus and the caret, by id.
  function saveState(m) {
    var st = { details: {}, values: {}, focus: null, sel: null };
    m.querySelectorAll('details[id]').forEach(function (d) { st.details[d.id] = d.open; });
    m.querySelectorAll('input[id], textarea[id], select[id]').forEach(function (el) {
      if (el.type !== 'hidden') { st.values[el.id] = el.value; }
    });
    var a = document.activeElement;
    if (a && a.id && m.contains(a)) {
      st.focus = a.id;
      try { st.sel = [a.selectionStart, a.selectionEnd]; } catch (e) { st.sel = null; }
    }
    return st;
  }

  function restoreState(m, st) {
    Object.keys(st.details).forEach(function (id) {
      var d = document.getElementById(id);
      if (d && d.tagName === 'DETAILS' && m.contains(d)) { d.open = st.details[id]; }
    });
    Object.keys(st.values).forEach(function (id) {
      var el = document.getElementById(id);
      if (el && m.contains(el) && 'value' in el) { el.value = st.values[id]; }
    });
    if (st.focus) {
      var f = document.getElementById(st.focus);
      if (f) {
        f.focus({ preventScroll: true });
        if (st.sel && f.setSelectionRange && st.sel[0] !== null) {
          try { f.setSelectionRange(st.sel[0], st.sel[1]); } catch (e) { /* not a text field */ }
        }
      }
    }
  }

  // refresh fetches the page again and swaps its <main> in place.
  function refresh() {
    if (refreshing) { again = true; return; }
    refreshing = true;
    fetch(location.href, { credentials: 'same-origin', headers: { 'Accept': 'text/html' } })
      .then(function (r) {
        // A page that went away (a rollback removed the task) shows its
        // error page's <main>; anything but HTML is a failure.
        if (!/text\/html/.test(r.headers.get('Content-Type') || '')) { throw new Error('HTTP ' + r.status); }
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, 'text/html');
        var next = doc.querySelector('main');
        var cur = main();
        if (!next || !cur) { return; }
        var st = saveState(cur);
        var x = window.scrollX, y = window.scrollY;
        cur.innerHTML = next.innerHTML;
        Array.prototype.forEach.call(next.attributes, function (a) { cur.setAttribute(a.name, a.value); });
        restoreState(cur, st);
        window.scrollTo(x, y);
        if (doc.title) { document.title = doc.title; }
        document.dispatchEvent(new CustomEvent('flowctl:refreshed', { detail: { seq: cur.getAttribute('data-seq') } }));
      })
      .catch(function () { setLive('error', 'reconnecting'); })
      .then(function () {
        refreshing = false;
        if (again) { again = false; schedule(); }
      });
  }

  function schedule() {
    if (timer) { clearTimeout(timer); }
    timer = setTimeout(function () { timer = null; refresh(); }, DEBOUNCE_MS);
  }

  // live subscribes to the project's events from the seq the page was
  // read at; an event the page already shows is skipped.
  function live() {
    var m = main();
    if (!m || m.getAttribute('data-live') !== 'true' || m.hasAttribute('data-at') || !window.EventSource) { return; }
    var project = m.getAttribute('data-project');
    if (!project) { return; }
    var since = m.getAttribute('data-seq') || '0';
    var es = new EventSource('/api/v1/events?project=' + encodeURIComponent(project) + '&since=' + encodeURIComponent(since));
    var onEvent = function (e) {
      var shown = Number(main().getAttribute('data-seq') || 0);
      if (e.lastEventId && Number(e.lastEventId) <= shown) { return; }
      schedule();
    };
    es.addEventListener('flow', onEvent);
    es.addEventListener('message', onEvent);
    es.addEventListener('open', function () { setLive('on', 'live'); });
    es.addEventListener('error', function () { setLive('error', 'reconnecting'); });
  }

  // Writes: a form with data-api posts its fields as JSON to the API (the
  // button pressed may name its own data-api), with the cookie and the
  // CSRF header; on success the page refreshes.
  function formBody(form) {
    var body = {};
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.disabled || el.tagName === 'BUTTON') { return; }
      if (el.hasAttribute('data-bool')) { body[el.name] = el.value === 'true'; return; }
      if (el.type === 'checkbox') { body[el.name] = el.checked; return; }
      body[el.name] = el.value;
    });
    return body;
  }

  function show(out, ok, text) {
    if (!out) { return; }
    out.className = 'result ' + (ok ? 'ok' : 'fail');
    out.textContent = text;
  }

  function errorText(status, data) {
    if (data && data.error) {
      var e = data.error;
      return (e.message || e.code || 'error') + (e.hint ? ' (' + e.hint + ')' : '');
    }
    if (status === 401 || status === 403) { return 'not allowed: open the one-time link flowctl serve printed, or the server is read-only'; }
    return 'HTTP ' + status;
  }

  document.addEventListener('submit', function (ev) {
    var form = ev.target;
    if (!form.matches || !form.matches('form[data-api]')) { return; }
    ev.preventDefault();
    var btn = ev.submitter || form.querySelector('button[type=submit]');
    var url = (btn && btn.getAttribute('data-api')) || form.getAttribute('data-api');
    var out = form.querySelector('output.result');
    var confirmID = form.getAttribute('data-confirm-input');
    if (confirmID) {
      var c = document.getElementById(confirmID);
      if (!c || c.value !== c.getAttribute('data-expect')) {
        show(out, false, 'type ' + (c ? c.getAttribute('data-expect') : '') + ' to confirm');
        return;
      }
    }
    if (btn) { btn.disabled = true; }
    fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'Accept': 'application/json', 'X-Flowctl-CSRF': '1' },
      body: JSON.stringify(formBody(form))
    }).then(function (r) {
      return r.text().then(function (t) {
        var data = null;
        try { data = t ? JSON.parse(t) : null; } catch (e) { data = null; }
        if (!r.ok) { throw new Error(errorText(r.status, data)); }
        return data;
      });
    }).then(function () {
      show(out, true, 'done');
      if (form.hasAttribute('data-reset')) { form.reset(); }
      refresh();
    }).catch(function (e) {
      show(out, false, e.message);
    }).then(function () {
      if (btn) { btn.disabled = false; }
    });
  });

  live();
})();
