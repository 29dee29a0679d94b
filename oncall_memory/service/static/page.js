// The one script of the search page (same origin, allowed by its CSP): Enter in the alert box submits the
// search, Shift+Enter adds a new line, Ctrl/Cmd+Enter submits too. Without it the button still works.
document.addEventListener("keydown", (event) => {
  const box = event.target;
  if (!(box instanceof HTMLTextAreaElement) || box.id !== "q" || event.key !== "Enter" || event.isComposing) {
    return;
  }
  if (event.shiftKey && !(event.ctrlKey || event.metaKey)) {
    return;
  }
  event.preventDefault();
  if (box.form && box.value.trim()) {
    box.form.requestSubmit();
  }
});
