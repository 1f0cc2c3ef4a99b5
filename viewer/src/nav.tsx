/**
 * Navigation inside the viewer: the view state lives in the URL (`?domain=&path=&marker=&limit=`),
 * links push history entries without reloading the page, and back/forward work.
 */
import { type MouseEvent, type ReactNode, useEffect, useState } from 'react';
import { parseViewState, type ViewState, viewQuery } from './format';

const listeners = new Set<() => void>();

/** Go to a view (pushes a history entry; `state` is kept with it, e.g. folder paging history). */
export function navigate(to: Partial<ViewState> & { domain: string }, state?: unknown, replace = false): void {
  const url = window.location.pathname + viewQuery(to);
  if (replace) window.history.replaceState(state ?? null, '', url);
  else window.history.pushState(state ?? null, '', url);
  for (const l of listeners) l();
}

/** The current view state, updated on navigation and on back/forward. */
export function useViewState(): ViewState {
  const [s, setS] = useState(() => parseViewState(window.location.search));
  useEffect(() => {
    const update = () => setS(parseViewState(window.location.search));
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return s;
}

/** A link to a view: a real `<a href>` (new tab works), navigating in place on a plain click. */
export function Link(props: { to: Partial<ViewState> & { domain: string }; state?: unknown; className?: string; title?: string; children: ReactNode }) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.to, props.state);
  };
  return (
    <a href={viewQuery(props.to)} onClick={onClick} className={props.className} title={props.title}>
      {props.children}
    </a>
  );
}
