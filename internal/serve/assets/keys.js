// Keyboard shortcuts for the labeling page (served as a file: the page's
// Content-Security-Policy allows no inline script). It only submits the
// page's own forms and writes hints with textContent; it reads nothing
// from the output shown and evaluates nothing.
//
//   p  pass                     s  skip                u  undo the last label
//   f  fail: focuses the reason box; there Enter saves the fail once a
//      reason is typed (Shift+Enter is a new line), and so does a second
//      f pressed outside the box. Escape leaves any text box.
//
// Keys are ignored while typing in a text field (but Escape, and Enter in
// the reason box after f), and with Ctrl, Alt or Meta held.
(function () {
  "use strict";
  var form = document.getElementById("label-form");
  var undo = document.getElementById("undo-form");
  if (!form && !undo) {
    return;
  }
  var reason = document.getElementById("reason");
  var hint = document.getElementById("key-hint");
  var sent = false;
  var failing = false; // f was pressed: Enter in the reason box saves a fail
  // swallow is set from the keydown of an f that focused the reason box to
  // its keyup: the f's own character must not land in the box (a browser
  // drops it after preventDefault; a synthesized char event may not).
  var swallow = false;

  function say(text) {
    if (hint) {
      hint.textContent = text;
    }
  }

  function typing(el) {
    if (!el || !el.tagName) {
      return false;
    }
    var tag = el.tagName.toLowerCase();
    if (tag === "textarea" || tag === "select" || el.isContentEditable) {
      return true;
    }
    if (tag === "input") {
      var type = (el.getAttribute("type") || "text").toLowerCase();
      return ["button", "submit", "reset", "checkbox", "radio", "hidden"].indexOf(type) < 0;
    }
    return false;
  }

  function submitVerdict(verdict) {
    if (sent || !form) {
      return;
    }
    var button = document.getElementById("btn-" + verdict);
    if (!button) {
      return;
    }
    sent = true;
    if (form.requestSubmit) {
      form.requestSubmit(button);
    } else {
      button.click();
    }
  }

  function hasReason() {
    return reason && reason.value.trim() !== "";
  }

  function fail() {
    if (hasReason()) {
      submitVerdict("fail");
      return;
    }
    if (reason) {
      failing = true;
      swallow = true;
      reason.focus();
      say("Type why it fails, then Enter to save the fail (Shift+Enter for a new line, Esc to leave the box).");
    }
  }

  document.addEventListener("keypress", function (ev) {
    if (swallow && ev.key === "f") {
      ev.preventDefault();
    }
  }, true);
  document.addEventListener("keyup", function (ev) {
    if (ev.key === "f") {
      swallow = false;
    }
  }, true);

  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.altKey || ev.metaKey || ev.isComposing) {
      return;
    }
    var el = document.activeElement;
    if (typing(el)) {
      if (ev.key === "Escape") {
        el.blur();
        failing = false;
        say("");
        ev.preventDefault();
        return;
      }
      if (el === reason && ev.key === "Enter" && !ev.shiftKey && failing) {
        ev.preventDefault();
        if (hasReason()) {
          submitVerdict("fail");
        } else {
          say("A fail needs a reason: type what is wrong with the output.");
        }
      }
      return;
    }
    switch (ev.key) {
      case "p":
        ev.preventDefault();
        submitVerdict("pass");
        break;
      case "s":
        ev.preventDefault();
        submitVerdict("skip");
        break;
      case "f":
        ev.preventDefault();
        fail();
        break;
      case "u":
        if (undo && !sent) {
          ev.preventDefault();
          sent = true;
          undo.submit();
        }
        break;
    }
  });
})();
