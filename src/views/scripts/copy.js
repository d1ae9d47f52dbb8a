// Copy buttons on /admin (an app's endpoints): each `button[data-copy]` copies the text of the
// element it names. The buttons are `hidden` in the page, so without this script (or without a
// clipboard) the URLs stay plain text to select.
;(function copyButtons() {
  if (!navigator.clipboard) return
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const source = document.getElementById(button.dataset.copy)
    if (!source) continue
    button.hidden = false
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(source.textContent.trim())
        button.textContent = 'Copied'
      } catch {
        button.textContent = 'Select and copy'
      }
      setTimeout(() => (button.textContent = 'Copy'), 2000)
    })
  }
})()
