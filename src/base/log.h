/* log.h - the daemons' log lines on stderr, as Kubernetes components write them, in one of
 * two formats (--logging-format):
 *
 *   text (klog):  I1203 12:34:56.789012   12345 serve] "Starting gpusched" version="0.1"
 *   json:         {"ts":1764765296789.012,"caller":"serve/serve.c:312","msg":"Starting
 *                 gpusched","v":0,"version":"0.1"}
 *
 * Text: severity (I info, W warning, E error), month and day, UTC time to the microsecond,
 * the process id, the component's tag (klog puts file:line there), then the message. JSON:
 * component-base's JSON logger (zap through zapr, as kube-scheduler --logging-format=json
 * writes it): "ts" milliseconds since the epoch as a float, "caller" the last directory and
 * file of the call and its line, "msg", "v" the verbosity of an info line (an error line has
 * none: warnings are info lines at 0), then the key/value pairs, an error line's "err" last.
 * A message written klog-style, `"Message" key="value" n=3`, becomes msg and pairs (a bare
 * number or true/false stays one); any other message is the msg as a whole. Strings are
 * escaped as zap escapes them (quote, backslash, control characters; invalid UTF-8 as
 * \ufffd). A verbosity (-v) decides how chatty: a line of level v prints when v <= the
 * verbosity (level 0 always). The daemons' only printer: gpulabel's loop (labeler/daemon.c)
 * and gpusched serve.
 *
 * Untrusted text (an API Status message, a name, an error) never starts a line of its own:
 * klog-style messages put it through log_quote (klog's quoting of a value) or log_quote_msg
 * (of a message), and the text writer escapes every control character left in a line
 * (`\n` as the two characters \ and n) but the line breaks of log_quote's multi-line form,
 * each followed by a tab or " >", as klog writes them. */
#ifndef BASE_LOG_H
#define BASE_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_fmt {
    LOG_FMT_TEXT = 0,
    LOG_FMT_JSON,
};

/* log_setup sets the tag after the pid ("gpulabel", "serve"; NULL leaves it) and the level up
 * to which log_printf prints (0 at start). Call it before other threads log. */
void log_setup(const char *tag, int verbosity);

/* log_set_format picks text (the default) or JSON; call it before other threads log. */
void log_set_format(enum log_fmt f);

/* log_set_object_keys names the keys whose values are object references written
 * "namespace/name" (klog.KObj's text form): in JSON such a value becomes klog's object,
 * {"name":"p","namespace":"ns"}. keys ends with NULL and must outlive the logging; call it
 * before other threads log. */
void log_set_object_keys(const char *const *keys);

/* log_fmt_parse reads a --logging-format value: "text" or "json" (kube-scheduler's names).
 * Returns 0, or -EINVAL when it is neither. */
int log_fmt_parse(const char *s, enum log_fmt *out);

/* log_quote returns s as klog's text format writes a string value after "key=" (its
 * serializer's writeStringValue): strconv.Quote's form ("...", with \" \\ \n \t \xHH
 * \uHHHH escapes) when s has no line break, else the multi-line form `<` NL, each line after a
 * tab, NL ` >`. log_quote_msg returns s as klog writes a message: strconv.Quote's form even
 * with line breaks. The result lives in a ring of 8 buffers of the calling thread: valid for
 * 8 more calls, enough for one log line's values; text beyond LOG_QUOTE_MAX bytes is cut,
 * the quotes kept. Which characters count as printable follows Go's unicode.IsPrint for
 * ASCII, C1 controls, spaces other than U+0020, format characters (bidirectional controls,
 * zero widths, the byte order mark), line and paragraph separators and private use; other
 * code points pass (base's Go %q helper will make it exact). */
#define LOG_QUOTE_MAX 2048
const char *log_quote(const char *s);
const char *log_quote_msg(const char *s);

/* log_printf prints one line of severity sev ('I', 'W', 'E') when v is at most the verbosity,
 * naming the calling file and line in JSON. Thread safe: one write(2) per line, so lines
 * never interleave; a message longer than a line (4 KiB) is cut. */
#define log_printf(sev, v, ...) log_printf_at(__FILE__, __LINE__, (sev), (v), __VA_ARGS__)
void log_printf_at(const char *file, int line, char sev, int v, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* log_format writes the text line log_printf would print for ts_sec/ts_nsec and pid into buf
 * (newline included, NUL-terminated, cut to size) and returns its length: for tests. */
size_t log_format(char *buf, size_t size, char sev, long ts_sec, long ts_nsec, int pid,
                  const char *msg);

/* log_format_json writes the JSON line for a message of severity sev and level v logged at
 * file:line at ts_sec/ts_nsec into buf (newline included, NUL-terminated). A line that does
 * not fit in size is cut at a pair, or within the msg, and stays valid JSON. Returns its
 * length (0 when size is below 64). For tests and log_printf. */
size_t log_format_json(char *buf, size_t size, char sev, int v, long ts_sec, long ts_nsec,
                       const char *file, int line, const char *msg);

#endif
