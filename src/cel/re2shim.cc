// re2shim.cc - a C interface to the parts of RE2 the CEL evaluator uses (Debian's libre2).
#include "cel/re2shim.h"

#include <re2/re2.h>

#include <cstring>
#include <new>

extern "C" void *cel_re2_new(const char *pat, size_t n, int *code, char *arg, size_t argsize,
                             size_t *argn)
{
    RE2::Options o;
    o.set_log_errors(false);
    o.set_encoding(RE2::Options::EncodingUTF8);
    o.set_max_mem(64 << 20);
    RE2 *re = new (std::nothrow) RE2(re2::StringPiece(pat, n), o);
    if (!re) {
        *code = -1;
        *argn = 0;
        return nullptr;
    }
    if (!re->ok()) {
        *code = re->error_code();
        const std::string &a = re->error_arg();
        size_t k = a.size() < argsize ? a.size() : argsize;
        memcpy(arg, a.data(), k);
        *argn = k;
        delete re;
        return nullptr;
    }
    return re;
}

extern "C" void cel_re2_free(void *re)
{
    delete static_cast<RE2 *>(re);
}

extern "C" int cel_re2_match(const void *p, const char *s, size_t n, size_t pos, size_t *b,
                             size_t *e)
{
    const RE2 *re = static_cast<const RE2 *>(p);
    re2::StringPiece text(s ? s : "", n), m;
    if (!re->Match(text, pos, n, RE2::UNANCHORED, &m, 1))
        return 0;
    *b = static_cast<size_t>(m.data() - text.data());
    *e = *b + m.size();
    return 1;
}
