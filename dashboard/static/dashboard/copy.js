// Copy buttons: <button data-copy-target="ID" data-copy-name="key" hidden> copies the value (an
// input's) or the text (a code block's) of the element #ID. The buttons stay hidden without
// JavaScript; the text is selectable by hand either way.
(function () {
  "use strict";
  var status = document.querySelector("[data-copy-status]");

  function say(message) {
    if (status) status.textContent = message;
  }

  function select(target) {
    if (typeof target.select === "function") {
      target.focus();
      target.select();
      return;
    }
    var range = document.createRange();
    range.selectNodeContents(target);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  document.querySelectorAll("[data-copy-target]").forEach(function (button) {
    var target = document.getElementById(button.getAttribute("data-copy-target"));
    if (!target) return;
    var name = button.getAttribute("data-copy-name") || "text";
    var label = button.textContent;
    var restore = null;
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = target.value !== undefined ? target.value : target.textContent;
      var copied = navigator.clipboard && window.isSecureContext
        ? navigator.clipboard.writeText(text)
        : Promise.reject(new Error("no clipboard"));
      copied.then(
        function () {
          button.textContent = "Copied";
          say("The " + name + " is copied to your clipboard.");
          window.clearTimeout(restore);
          restore = window.setTimeout(function () { button.textContent = label; }, 3000);
        },
        function () {
          select(target);
          say("Press Ctrl+C (or ⌘C) to copy the selected " + name + ".");
        }
      );
    });
  });
})();
