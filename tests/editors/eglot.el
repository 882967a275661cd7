;;; eglot.el --- drives `mzk lsp' from Emacs 28 + eglot in batch mode -*- lexical-binding: t -*-
;; Loads the shipped editors/emacs/mzk.el, opens TEST_FILE (which it must put
;; in `mzk-bundle-mode'), starts eglot the way `M-x eglot' does (from
;; `eglot-server-programs'), waits for its diagnostics, asks for a definition
;; and completions and the folding ranges, visits agents.yaml and tools.yaml
;; and asks for the folds of one and the document links of the other, shuts
;; the server down, and writes what it received to OUT.
;; env: LSP_CMD, TEST_FILE, OUT, DEF_LINE/DEF_COL, COMP_LINE/COMP_COL (0-based),
;;      PLUGIN_EMACS (the editors/emacs folder), OTHER_YAML, AGENTS_FILE, TOOLS_FILE.
(require 'eglot)
(require 'json)
(add-to-list 'load-path (getenv "PLUGIN_EMACS"))
(require 'mzk)
(setq mzk-command (split-string (getenv "LSP_CMD")))
(defvar mzk--diagnostics nil)
(defvar mzk--cwd default-directory)
(cl-defmethod eglot-handle-notification :before
  (_server (_method (eql textDocument/publishDiagnostics)) &key uri diagnostics &allow-other-keys)
  (when (string-suffix-p (file-name-nondirectory (getenv "TEST_FILE")) uri)
    (setq mzk--diagnostics diagnostics)))
(defun mzk--visit-and-request (server file method)
  "Visit FILE (eglot manages it as part of the bundle) and ask METHOD of it."
  (find-file file)
  (jsonrpc-request server method
                   (list :textDocument (list :uri (eglot--path-to-uri file)))))
(defun mzk--at (line col)
  (list :textDocument (list :uri (eglot--path-to-uri (getenv "TEST_FILE")))
        :position (list :line (string-to-number line) :character (string-to-number col))))
(let* ((deadline (+ (float-time) 30))
       (out (expand-file-name (getenv "OUT") mzk--cwd))
       other-mode mode definition completion folds agent-folds links shutdown-error)
  (setq eglot-connect-timeout 30)
  (find-file (getenv "OTHER_YAML"))
  (setq other-mode major-mode)
  (find-file (getenv "TEST_FILE"))
  (setq mode major-mode)
  (apply #'eglot (eglot--guess-contact))
  (while (and (not mzk--diagnostics) (< (float-time) deadline))
    (accept-process-output nil 0.05))
  (let ((server (eglot-current-server)))
    (setq definition
          (jsonrpc-request server :textDocument/definition
                           (mzk--at (getenv "DEF_LINE") (getenv "DEF_COL"))))
    (setq completion
          (jsonrpc-request server :textDocument/completion
                           (mzk--at (getenv "COMP_LINE") (getenv "COMP_COL"))))
    (setq folds
          (jsonrpc-request server :textDocument/foldingRange
                           (list :textDocument
                                 (list :uri (eglot--path-to-uri (getenv "TEST_FILE"))))))
    (setq agent-folds
          (mzk--visit-and-request server (getenv "AGENTS_FILE") :textDocument/foldingRange))
    (setq links
          (mzk--visit-and-request server (getenv "TOOLS_FILE") :textDocument/documentLink))
    (setq shutdown-error
          (condition-case e (progn (eglot-shutdown server nil 5) nil)
            (error (format "%S" e)))))
  (with-temp-file out
    (insert (json-encode
             (list :received (if mzk--diagnostics t :json-false)
                   :mode (symbol-name mode)
                   :other_mode (symbol-name other-mode)
                   :diagnostics (or mzk--diagnostics [])
                   :definition definition
                   :completion (mapcar (lambda (item) (plist-get item :label))
                                       (if (vectorp completion) completion
                                         (plist-get completion :items)))
                   :folds (mapcar (lambda (fold) (plist-get fold :startLine)) folds)
                   :agent_folds (mapcar (lambda (fold)
                                          (vector (plist-get fold :startLine)
                                                  (plist-get fold :endLine)))
                                        agent-folds)
                   :links (mapcar (lambda (link)
                                    (vector (plist-get (plist-get (plist-get link :range) :start)
                                                       :line)
                                            (plist-get link :target)))
                                  links)
                   :shutdown_error shutdown-error))))
  (kill-emacs (if mzk--diagnostics 0 2)))
