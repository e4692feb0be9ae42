// @ts-check
/** The sign-in form a 401 brings up: a token (an API key or a JWT), kept in sessionStorage only. */
import { useState } from 'preact/hooks';
import { setToken } from './api.js';
import { html } from './html.js';

/** @param {{ message: string, onSignedIn: () => void }} props */
export function SignIn({ message, onSignedIn }) {
  const [value, setValue] = useState('');
  return html`<section class="signin" aria-labelledby="signin-title">
    <h2 id="signin-title">Sign in</h2>
    <p role="alert" class="error">${message || 'The API needs a token.'}</p>
    <form onSubmit=${(/** @type {Event} */ e) => {
      e.preventDefault();
      setToken(value.trim());
      onSignedIn();
    }}>
      <label for="token">Token</label>
      <input id="token" type="password" autocomplete="off" required value=${value} onInput=${(/** @type {any} */ e) => setValue(e.currentTarget.value)} />
      <p class="hint">Kept in this tab only (sessionStorage), sent as <code>Authorization: Bearer</code>.</p>
      <div class="actions"><button type="submit">Sign in</button></div>
    </form>
  </section>`;
}
