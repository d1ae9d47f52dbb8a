// Passkeys on /login, /login/two-step, /account and /setup, with SimpleWebAuthn's browser half
// (/assets/webauthn.js). Each ceremony asks the server for options (a challenge bound to this
// browser), runs the browser's WebAuthn call, puts its answer in the form's hidden `credential`
// field and submits the form as usual: the server's answer is an ordinary page.
;(function passkeys() {
  const lib = window.SimpleWebAuthnBrowser
  if (!lib || !lib.browserSupportsWebAuthn()) return

  async function optionsFor(url, form) {
    const body = new URLSearchParams({ csrf_token: form.elements.csrf_token.value })
    const response = await fetch(url, { method: 'POST', body, credentials: 'same-origin' })
    // The words come from the page, in its language (data-refused, data-cancelled on the error note).
    if (!response.ok) throw new Error(form.querySelector('.passkey-error')?.dataset.refused || 'The server refused the passkey request. Reload the page and try again.')
    return response.json()
  }

  function submitWith(form, credential) {
    form.elements.credential.value = JSON.stringify(credential)
    form.submit()
  }

  function showError(form, error) {
    const note = form.querySelector('.passkey-error')
    if (!note || (error && error.name === 'AbortError')) return
    note.textContent = error && error.name === 'NotAllowedError' ? note.dataset.cancelled || 'The passkey request was cancelled or timed out.' : String((error && error.message) || error)
    note.hidden = false
  }

  const add = document.getElementById('add-passkey')
  if (add)
    add.addEventListener('submit', async function addPasskey(event) {
      event.preventDefault()
      try {
        const optionsJSON = await optionsFor('/account/passkeys/options', add)
        submitWith(add, await lib.startRegistration({ optionsJSON }))
      } catch (error) {
        showError(add, error)
      }
    })

  // "Confirm with a passkey" (Change or set the password, Delete my account): a fresh assertion
  // of this account in the form's `credential` field, in place of the password.
  document.querySelectorAll('button[data-passkey-confirm]').forEach(function confirmButton(button) {
    const form = button.form
    button.hidden = false
    button.addEventListener('click', async function confirmWithPasskey(event) {
      event.preventDefault()
      // The new password first (the browser's own message), so one passkey prompt does it.
      const fresh = form.elements.new_password || form.elements.password
      if (fresh && fresh.autocomplete === 'new-password' && !fresh.reportValidity()) return
      try {
        const optionsJSON = await optionsFor('/account/passkeys/confirm-options', form)
        submitWith(form, await lib.startAuthentication({ optionsJSON }))
      } catch (error) {
        showError(form, error)
      }
    })
  })
  // /setup: the first admin with a passkey instead of a password. The options are asked with the
  // form's token, name and email; the answer is posted as the form, to /setup/passkey.
  const setup = document.getElementById('setup-passkey')
  if (setup) {
    const form = setup.closest('form')
    setup.hidden = false
    setup.querySelector('button').addEventListener('click', async function createWithPasskey() {
      if (!form.elements.full_name.reportValidity() || !form.elements.email.reportValidity()) return
      try {
        const body = new URLSearchParams()
        for (const name of ['csrf_token', 'token', 'full_name', 'email']) body.set(name, form.elements[name].value)
        const response = await fetch('/setup/passkey/options', { method: 'POST', body, credentials: 'same-origin' })
        const answer = await response.json().catch(() => ({}))
        if (!response.ok) throw new Error(answer.error_description || 'The server refused the passkey request. Reload the page and try again.')
        form.action = '/setup/passkey'
        submitWith(form, await lib.startRegistration({ optionsJSON: answer }))
      } catch (error) {
        showError(setup, error)
      }
    })
  }

  const signIn = document.getElementById('passkey-sign-in')
  if (!signIn) return
  signIn.hidden = false
  signIn.addEventListener('submit', async function signInWithPasskey(event) {
    event.preventDefault()
    try {
      const optionsJSON = await optionsFor('/login/passkey/options', signIn)
      submitWith(signIn, await lib.startAuthentication({ optionsJSON }))
    } catch (error) {
      showError(signIn, error)
    }
  })

  // Conditional mediation: the browser offers passkeys in the email field's autofill.
  const email = document.querySelector('input[autocomplete~="webauthn"]')
  if (email)
    lib.browserSupportsWebAuthnAutofill().then(async function autofill(supported) {
      if (!supported) return
      try {
        const optionsJSON = await optionsFor('/login/passkey/options', signIn)
        submitWith(signIn, await lib.startAuthentication({ optionsJSON, useBrowserAutofill: true }))
      } catch (error) {
        showError(signIn, error)
      }
    })
})()
