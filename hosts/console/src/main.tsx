import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, run } from './api.ts';
import { onSessionChange, sessionToken, setSession } from './session.ts';
import { BASE, interceptLinks, navigate, useLocation } from './router.ts';
import { AuthPage, HostedCallback, type AuthStep } from './pages/auth.tsx';
import { MarketPage } from './pages/market.tsx';
import { RentPage } from './pages/rent.tsx';
import { InstancesPage } from './pages/instances.tsx';
import { TokensPage } from './pages/tokens.tsx';
import { PeoplePage } from './pages/people.tsx';
import { LibraryPage } from './pages/library.tsx';
import { BillingPage } from './pages/billing.tsx';
import { SpotClaimsPage } from './pages/spot-claims.tsx';
import { revokeHeld, TenantSwitch } from './tenants.tsx';
import './style.css';

const NAV: [string, string][] = [
  ['/market', 'Market'],
  ['/instances', 'Instances'],
  ['/spot-claims', 'Spot claims'],
  ['/billing', 'Billing'],
  ['/tokens', 'Tokens'],
  ['/people', 'People'],
  ['/library', 'Keys, images & more'],
];

/** The tab's session: a page is drawn afresh for a new one (signed in, or switched to another tenant). */
function useSession(): string | null {
  const [token, set] = useState(sessionToken());
  useEffect(() => onSessionChange(() => set(sessionToken())), []);
  return token;
}

function Page({ path, query, signedIn }: { path: string; query: URLSearchParams; signedIn: boolean }) {
  if (path === '/') return <MarketPage signedIn={signedIn} />;
  if (path === '/market') return <MarketPage signedIn={signedIn} />;
  if (path === '/callback') return <HostedCallback />;
  const auth = /^\/(sign-in|sign-up|confirm|forgot|reset|github)$/.exec(path);
  if (auth) return <AuthPage step={auth[1] as AuthStep} />;
  if (!signedIn) return <AuthPage step="sign-in" next={path} />;
  if (path.startsWith('/rent/')) return <RentPage nodeId={decoded(path.slice('/rent/'.length))} />;
  if (path === '/instances') return <InstancesPage focus={query.get('instance')} />;
  if (path === '/spot-claims') return <SpotClaimsPage nodeId={query.get('node')} />;
  if (path === '/billing') return <BillingPage />;
  if (path === '/tokens') return <TokensPage />;
  if (path === '/people') return <PeoplePage />;
  if (path === '/library') return <LibraryPage />;
  return (
    <section>
      <h1>Not found</h1>
      <p>
        There is no page at {BASE}
        {path}. <a href={`${BASE}/market`}>Go to the market</a>.
      </p>
    </section>
  );
}

/** A path segment as typed, when it is not valid percent-encoding (the node then is not found, said on the page). */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const TITLES: Record<string, string> = { '/': 'Market', '/market': 'Market', '/instances': 'Instances', '/spot-claims': 'Spot claims', '/billing': 'Billing', '/tokens': 'Tokens', '/people': 'People', '/library': 'Keys, images & more' };

function App() {
  const { path, query } = useLocation();
  const token = useSession();
  const signedIn = token !== null;
  useEffect(() => {
    document.title = `${TITLES[path] ?? (path.startsWith('/rent/') ? 'Rent' : 'Console')} · GPU control plane`;
  }, [path]);
  const signOut = async () => {
    // a session is ended by revoking itself
    const self = await run(api().GET('/v1/tokens/self'));
    if (self.data) await run(api().DELETE('/v1/tokens/{token_id}', { params: { path: { token_id: self.data.id } } }));
    // and the sessions this tab holds in the person's other tenants
    await revokeHeld();
    setSession(null);
    navigate('/sign-in');
  };
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <a class="brand" href={`${BASE}/market`}>
          GPU control plane
        </a>
        <nav aria-label="Main">
          <ul>
            {NAV.filter(([to]) => signedIn || to === '/market').map(([to, label]) => (
              <li key={to}>
                <a href={`${BASE}${to}`} aria-current={path === to || (to === '/market' && path === '/') ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
            <li>
              <a href="/docs">API docs</a>
            </li>
            {signedIn && <TenantSwitch />}
            <li>
              {signedIn ? (
                <button type="button" class="link" onClick={signOut}>
                  Sign out
                </button>
              ) : (
                <a href={`${BASE}/sign-in`}>Sign in</a>
              )}
            </li>
          </ul>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        <Page key={token ?? ''} path={path} query={query} signedIn={signedIn} />
      </main>
    </>
  );
}

/** Back from a card checkout (the server's return address is its root, which redirects here with the query). */
function checkoutReturn(): void {
  const query = new URLSearchParams(location.search);
  if (query.get('checkout') && query.get('session_id') && !location.pathname.startsWith(`${BASE}/billing`)) navigate(`/billing${location.search}`, true);
}

const root = document.getElementById('app')!;
interceptLinks(root);
checkoutReturn();
render(<App />, root);
