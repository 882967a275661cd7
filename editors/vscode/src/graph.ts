// The webview page that renders a Mermaid flowchart with the mermaid copy
// shipped in the extension (no network). Pure, unit-tested.

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

export function graphHtml(mermaidText: string, scriptUri: string, cspSource: string, nonce: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${cspSource} data:; style-src ${cspSource} 'unsafe-inline'; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Transition graph</title>
</head>
<body>
<pre class="mermaid">${escapeHtml(mermaidText)}</pre>
<script nonce="${nonce}" src="${scriptUri}"></script>
<script nonce="${nonce}">mermaid.initialize({ startOnLoad: true, securityLevel: "strict", theme: document.body.classList.contains("vscode-dark") ? "dark" : "default" });</script>
</body>
</html>`;
}
