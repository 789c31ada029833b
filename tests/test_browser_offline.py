"""The page fetches nothing from outside the server (issue 36, point 1): not a favicon, a font, an
image or a chart library. A request to another host fails offline and tells a third party who
opened the tool.

Debian chromium opens the dashboard (``streamlit run``, its own SQLite file holding the bundled
sample run) with the network blocked: every request of the browser context that is not to the
app's own ``127.0.0.1:<port>`` is recorded and aborted. Every page of the sidebar's navigation is
opened by clicking its link, as a person does (the list is read from the sidebar itself, so a page
added later is opened too), and the icons the document names (``<link rel=icon>``) must be the
server's.
"""

from __future__ import annotations

from urllib.parse import urlparse

from browser import NAV_LINK, TIMEOUT_MS, AppServer, no_exception, settle
from playwright.sync_api import BrowserContext, Page, Route, expect


def block_outside(context: BrowserContext, server: AppServer) -> list[str]:
    """Abort every request of ``context`` that is not to ``server``; the list records them."""
    outside: list[str] = []

    def route(route: Route) -> None:
        url = urlparse(route.request.url)
        if url.scheme in ("data", "blob") or (url.hostname == "127.0.0.1" and url.port == server.port):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort("internetdisconnected")

    context.route("**/*", route)
    return outside


def test_no_page_of_the_navigation_fetches_from_another_host(
    server: AppServer, context: BrowserContext, page: Page
) -> None:
    outside = block_outside(context, server)
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    page.goto(f"{server.url}/?reviewer=offline_tester", timeout=TIMEOUT_MS)
    settle(page)
    links = page.locator(NAV_LINK)
    expect(links.first).to_be_visible(timeout=TIMEOUT_MS)
    names = [text.strip().splitlines()[-1] for text in links.all_inner_texts()]  # after the icon's name
    assert len(names) >= 13, names
    for i, name in enumerate(names):
        links.nth(i).click()
        settle(page)
        page.wait_for_timeout(500)  # charts and tables load their code after the script run ends
        no_exception(page, name)
    icons = page.evaluate("() => [...document.querySelectorAll('link[rel~=icon]')].map(l => l.href)")
    print(f"{len(names)} pages opened; icons {icons}; requests to other hosts: {outside}")
    assert icons and all(urlparse(i).hostname == "127.0.0.1" for i in icons), icons
    icon = page.request.get(icons[0])
    assert icon.ok and icon.headers["content-type"].startswith("image/"), (icon.status, icon.headers)
    assert all(urlparse(url).hostname == "127.0.0.1" for url in sockets), sockets
    assert outside == [], f"requests to other hosts: {sorted(set(outside))}"
