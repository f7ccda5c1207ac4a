// Copy buttons: <button data-copy-target="ID" hidden> copies the value of the element #ID.
// The button stays hidden without JavaScript; the value is selectable by hand either way.
(function () {
  "use strict";
  var status = document.querySelector("[data-copy-status]");

  function say(message) {
    if (status) status.textContent = message;
  }

  document.querySelectorAll("[data-copy-target]").forEach(function (button) {
    var target = document.getElementById(button.getAttribute("data-copy-target"));
    if (!target) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = target.value !== undefined ? target.value : target.textContent;
      var copied = navigator.clipboard && window.isSecureContext
        ? navigator.clipboard.writeText(text)
        : Promise.reject(new Error("no clipboard"));
      copied.then(
        function () {
          button.textContent = "Copied";
          say("The key is copied to your clipboard.");
        },
        function () {
          target.focus();
          target.select();
          say("Press Ctrl+C (or ⌘C) to copy the selected key.");
        }
      );
    });
  });
})();
