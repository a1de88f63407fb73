import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { ApiError } from './api.ts';
import { relative as relativeTo, when } from './format.ts';

/** The API's detail, where the person acted, announced to screen readers. */
export function ErrorText({ error }: { error: ApiError | string | null | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {typeof error === 'string' ? error : error.detail}
    </p>
  );
}

export function Field(props: { label: string; hint?: string; children: (id: string, hintId: string | undefined) => ComponentChildren }) {
  const id = useId();
  const hintId = props.hint ? `${id}-hint` : undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children(id, hintId)}
      {props.hint && (
        <small id={hintId} class="hint">
          {props.hint}
        </small>
      )}
    </div>
  );
}

/** A text input bound to a state value. */
export function Input(props: { label: string; hint?: string; value: string; onInput: (v: string) => void; type?: string; required?: boolean; autocomplete?: string; inputMode?: string; placeholder?: string; pattern?: string; min?: string; name?: string }) {
  const { label, hint, value, onInput, ...rest } = props;
  return (
    <Field label={label} {...(hint ? { hint } : {})}>
      {(id, hintId) => <input id={id} aria-describedby={hintId} value={value} onInput={(e) => onInput((e.target as HTMLInputElement).value)} {...(rest as object)} />}
    </Field>
  );
}

/** A button busy while its action runs ("long waits show progress"). */
/** A saved template to set machines up from, or none. */
export function TemplateSelect(props: { hint: string; templates: readonly { id: string; name: string }[]; value: string; onChange: (id: string) => void }) {
  return (
    <Field label="Template" hint={props.hint}>
      {(id, hintId) => (
        <select id={id} aria-describedby={hintId} value={props.value} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
          <option value="">None</option>
          {props.templates.map((t) => (
            <option key={t.id} value={t.id}>
              {t.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

export function Busy({ busy, children, ...rest }: { busy: boolean; children: ComponentChildren; type?: 'submit' | 'button'; class?: string; onClick?: () => void; disabled?: boolean }) {
  return (
    <button type={rest.type ?? 'submit'} class={rest.class} onClick={rest.onClick} disabled={busy || rest.disabled} aria-busy={busy}>
      {busy ? <span class="spinner" aria-hidden="true" /> : null}
      {children}
    </button>
  );
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
      setTimeout(() => setDone(false), 2000);
    } catch {
      // no clipboard permission: select the text instead, the person copies it by hand
      setDone(false);
    }
  };
  // the button's name always starts with what it shows ("Copy"); the outcome is announced beside it
  return (
    <>
      <button type="button" class="secondary small" onClick={copy} aria-label={label}>
        Copy
      </button>
      <span class="copied" role="status">
        {done ? 'Copied' : ''}
      </span>
    </>
  );
}

/**
 * A button that asks first, in a modal dialog (keyboard: focus moves in, Escape cancels). `run` answers an error
 * to show in the dialog, or nothing when done.
 */
export function Confirm(props: {
  label: string;
  /** The button's accessible name, when the visible label alone is ambiguous (one "Remove" per row); it starts with the label. */
  name?: string;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  run: () => Promise<ApiError | null | undefined>;
  danger?: boolean;
  small?: boolean;
  disabled?: boolean;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const titleId = useId();
  const open = () => {
    setError(null);
    dialog.current?.showModal();
  };
  const go = async () => {
    setBusy(true);
    const failed = await props.run();
    setBusy(false);
    if (failed) setError(failed);
    else dialog.current?.close();
  };
  return (
    <>
      <button type="button" class={`${props.danger ? 'danger' : 'secondary'}${props.small ? ' small' : ''}`} onClick={open} disabled={props.disabled} aria-label={props.name}>
        {props.label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId}>
        <h2 id={titleId}>{props.title}</h2>
        {props.children}
        <ErrorText error={error} />
        <div class="actions">
          <Busy busy={busy} type="button" class={props.danger ? 'danger' : ''} onClick={go}>
            {props.confirmLabel}
          </Busy>
          <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}

/** Re-renders every `ms` (countdowns, relative times). */
export function useTick(ms: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

/** Loads on mount and on `deps`; `reload` runs it again. */
export function useLoad<T>(load: () => Promise<{ data?: T; error?: ApiError }>, deps: unknown[] = []) {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const run = async () => {
    const result = await load();
    setState({ ...(result.data !== undefined && { data: result.data }), ...(result.error && { error: result.error }), loading: false });
  };
  useEffect(() => {
    setState((s) => ({ ...s, loading: true }));
    void run();
  }, deps);
  return { ...state, reload: run };
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      <span class="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

export function Time({ iso, now }: { iso: string | null | undefined; now?: number }) {
  if (!iso) return <span>—</span>;
  return (
    <time dateTime={iso} title={new Date(iso).toISOString()}>
      {when(iso)} <small>({relativeTo(iso, now)})</small>
    </time>
  );
}
