-- Drives `mzk lsp` from headless Neovim 0.7 (start_client + buf_attach_client,
-- the API 0.7 has) and writes what the editor received as JSON.
-- env: LSP_CMD (server argv), TEST_FILE (file to open), OUT (JSON path),
--      DEF_LINE/DEF_COL (0-based definition position), COMP_LINE/COMP_COL.
local cmd = vim.split(os.getenv("LSP_CMD"), " ", { trimempty = true })
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("TEST_FILE")))
local bufnr = vim.api.nvim_get_current_buf()
local uri = vim.uri_from_bufnr(bufnr)
local published = nil
local client_id = vim.lsp.start_client({
  name = "mzk",
  cmd = cmd,
  root_dir = vim.fn.fnamemodify(os.getenv("TEST_FILE"), ":h"),
  handlers = {
    ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
      if result.uri == uri then published = result end
      vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
    end,
  },
})
vim.lsp.buf_attach_client(bufnr, client_id)
local got = vim.wait(20000, function() return published ~= nil end, 20)

local function at(line, col)
  return { textDocument = { uri = uri }, position = { line = tonumber(line), character = tonumber(col) } }
end
local function first_result(responses)
  for _, r in pairs(responses or {}) do
    if r.result ~= nil then return r.result end
  end
  return vim.NIL
end
local definition = first_result(vim.lsp.buf_request_sync(bufnr, "textDocument/definition",
  at(os.getenv("DEF_LINE"), os.getenv("DEF_COL")), 10000))
local completion = first_result(vim.lsp.buf_request_sync(bufnr, "textDocument/completion",
  at(os.getenv("COMP_LINE"), os.getenv("COMP_COL")), 10000))
local labels = {}
local items = completion ~= vim.NIL and (completion.items or completion) or {}
for _, item in ipairs(items) do table.insert(labels, item.label) end

local f = io.open(os.getenv("OUT"), "w")
f:write(vim.fn.json_encode({
  received = got,
  diagnostics = published and published.diagnostics or vim.NIL,
  editor_diagnostics = #vim.diagnostic.get(bufnr),
  definition = definition,
  completion = labels,
}), "\n")
f:close()
vim.lsp.stop_client(client_id)
vim.wait(2000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 20)
if got then vim.cmd("qa!") else vim.cmd("cquit 2") end
