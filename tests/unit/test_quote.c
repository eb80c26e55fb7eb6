/* test_quote.c - base/quote: Go's strconv.Quote on the edge cases (each expected value is what
 * Go's fmt.Sprintf("%q", s) prints). */
#include "test.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/quote.h"

/* q quotes n bytes at s both ways and checks that they agree */
static const char *q(const char *s, size_t n)
{
    static char out[256];
    struct buf b = BUF_INIT(0);
    char fixed[256];

    if (quote_go(&b, s, n))
        return "(error)";
    quote_go_to(fixed, sizeof(fixed), s, n);
    if (strcmp(fixed, b.data))
        test_fail(__FILE__, __LINE__, "quote_go_to gave %s, quote_go %s", fixed, b.data);
    snprintf(out, sizeof(out), "%s", b.data);
    buf_release(&b);
    return out;
}

#define Q(lit) q(lit, sizeof(lit) - 1)

static void quote_ascii_and_named_escapes(void)
{
    CHECK_STR_EQ(Q(""), "\"\"");
    CHECK_STR_EQ(Q("app"), "\"app\"");
    CHECK_STR_EQ(Q("a \"b\" \\c"), "\"a \\\"b\\\" \\\\c\"");
    CHECK_STR_EQ(Q("\a\b\f\n\r\t\v"), "\"\\a\\b\\f\\n\\r\\t\\v\"");
    CHECK_STR_EQ(Q("\x01\x1b\x7f"), "\"\\x01\\x1b\\x7f\"");
    CHECK_STR_EQ(Q("'`~"), "\"'`~\"");
}

static void quote_nul_inside(void)
{
    CHECK_STR_EQ(Q("app\0evil"), "\"app\\x00evil\"");
    CHECK_STR_EQ(Q("\0"), "\"\\x00\"");
}

static void quote_invalid_utf8_byte_by_byte(void)
{
    CHECK_STR_EQ(Q("\xff"), "\"\\xff\"");
    CHECK_STR_EQ(Q("a\xc3"), "\"a\\xc3\"");                          /* cut short */
    CHECK_STR_EQ(Q("\xc3("), "\"\\xc3(\"");                          /* bad continuation */
    CHECK_STR_EQ(Q("\xc0\x80"), "\"\\xc0\\x80\"");                   /* overlong NUL */
    CHECK_STR_EQ(Q("\xe0\x80\xaf"), "\"\\xe0\\x80\\xaf\"");          /* overlong '/' */
    CHECK_STR_EQ(Q("\xed\xa0\x80"), "\"\\xed\\xa0\\x80\"");          /* a surrogate */
    CHECK_STR_EQ(Q("\xf4\x90\x80\x80"), "\"\\xf4\\x90\\x80\\x80\""); /* past U+10FFFF */
    CHECK_STR_EQ(Q("\xef\xbf\xbd"), "\"\xef\xbf\xbd\""); /* U+FFFD itself is printable */
}

static void quote_printable_runes_stay(void)
{
    CHECK_STR_EQ(Q("caf\xc3\xa9"), "\"caf\xc3\xa9\"");                           /* é */
    CHECK_STR_EQ(Q("\xe2\x98\xba"), "\"\xe2\x98\xba\"");                         /* ☺ */
    CHECK_STR_EQ(Q("\xe6\x97\xa5\xe6\x9c\xac"), "\"\xe6\x97\xa5\xe6\x9c\xac\""); /* 日本 */
    CHECK_STR_EQ(Q("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");                 /* U+1F600 */
    CHECK_STR_EQ(Q("a\xcc\x81"), "\"a\xcc\x81\""); /* combining acute */
    CHECK_STR_EQ(Q("\xc2\xa1"), "\"\xc2\xa1\"");   /* ¡ */
}

static void quote_invisible_runes_escaped(void)
{
    CHECK_STR_EQ(Q("\xc2\x85"), "\"\\u0085\"");             /* C1 control NEL */
    CHECK_STR_EQ(Q("\xc2\xa0"), "\"\\u00a0\"");             /* no-break space */
    CHECK_STR_EQ(Q("\xc2\xad"), "\"\\u00ad\"");             /* soft hyphen */
    CHECK_STR_EQ(Q("\xe2\x80\x8b"), "\"\\u200b\"");         /* zero width space */
    CHECK_STR_EQ(Q("\xe2\x80\xae"), "\"\\u202e\"");         /* right-to-left override */
    CHECK_STR_EQ(Q("\xe2\x80\xa8"), "\"\\u2028\"");         /* line separator */
    CHECK_STR_EQ(Q("\xe3\x80\x80"), "\"\\u3000\"");         /* ideographic space */
    CHECK_STR_EQ(Q("\xef\xbb\xbf"), "\"\\ufeff\"");         /* byte order mark */
    CHECK_STR_EQ(Q("\xee\x80\x80"), "\"\\ue000\"");         /* private use */
    CHECK_STR_EQ(Q("\xef\xbf\xbe"), "\"\\ufffe\"");         /* noncharacter */
    CHECK_STR_EQ(Q("\xf3\xa0\x80\x81"), "\"\\U000e0001\""); /* language tag */
    CHECK_STR_EQ(Q("\xf4\x8f\xbf\xbf"), "\"\\U0010ffff\"");
    CHECK_STR_EQ(Q("\xf1\x80\x80\x80"), "\"\\U00040000\""); /* an empty plane */
    CHECK(quote_go_printable(0xe0100));                     /* a variation selector is a mark */
    CHECK(!quote_go_printable(0x110000));
}

static void quote_to_cuts_after_a_whole_escape(void)
{
    char out[16];

    CHECK_STR_EQ(quote_go_to(out, 8, "abcdefghij", 10), "\"ab\"...");
    CHECK_STR_EQ(quote_go_to(out, 8, "abcde", 5), "\"abcde\"");
    CHECK_STR_EQ(quote_go_to(out, 9, "\tbcdef", 6), "\"\\tb\"...");
    CHECK_STR_EQ(quote_go_to(out, 10, "\x01\x02\x03", 3), "\"\\x01\"...");
    CHECK_STR_EQ(quote_go_to(out, 16, "\x01\x02\x03", 3), "\"\\x01\\x02\\x03\"");
}

static void quote_respects_the_buf_cap(void)
{
    struct buf b = BUF_INIT(4);

    CHECK_INT_EQ(quote_go(&b, "abcdef", 6), -E2BIG);
    buf_release(&b);
}

static const struct test_case cases[] = {
    {"ascii and named escapes", quote_ascii_and_named_escapes},
    {"NUL inside", quote_nul_inside},
    {"invalid UTF-8 byte by byte", quote_invalid_utf8_byte_by_byte},
    {"printable runes stay", quote_printable_runes_stay},
    {"invisible runes escaped", quote_invisible_runes_escaped},
    {"quote_go_to cuts after a whole escape", quote_to_cuts_after_a_whole_escape},
    {"quote_go respects the buf cap", quote_respects_the_buf_cap},
};

TEST_SUITE(quote, cases)
