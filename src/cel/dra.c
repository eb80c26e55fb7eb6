/* dra.c - the DRA selector environment of k8s.io/dynamic-resource-allocation/cel v0.37.2,
 * and the device values a selector reads.
 *
 * The function table lists every overload the environment declares, in cel-go's order (the
 * order decides result types when several overloads match); it was taken from the real
 * environment (cel.Env.Functions() of the stored and new expression environments). The
 * stored environment, which kube-scheduler compiles with, declares the device's attributes as
 * dyn and has library.Lists v1 and includes(); the new-expression environment (the API
 * server's validation at compatibility version 1.36) declares them as google.protobuf.Any and
 * has library.Lists v0. */
#include "cel/dra.h"

#include "cel/celtest.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cel/eval.h"
#include "cel/quantity.h"
#include "cel/semver.h"

/* name, overload id, flags (M member, N non-strict, S stored only), argument types, result */
static const struct decl_row {
    const char *name, *id, *flags, *args, *result;
} decl_rows[] = {
    {"!_", "logical_not", "", "bool", "bool"},
    {"-_", "negate_double", "", "double", "double"},
    {"-_", "negate_int64", "", "int", "int"},
    {"@in", "in_list", "", "<A>,list(<A>)", "bool"},
    {"@in", "in_map", "", "<A>,map(<A>, <B>)", "bool"},
    {"@not_strictly_false", "not_strictly_false", "N", "bool", "bool"},
    {"@sortByAssociatedKeys", "list_int_sortByAssociatedKeys", "M", "list(<T>),list(int)",
     "list(<T>)"},
    {"@sortByAssociatedKeys", "list_uint_sortByAssociatedKeys", "M", "list(<T>),list(uint)",
     "list(<T>)"},
    {"@sortByAssociatedKeys", "list_double_sortByAssociatedKeys", "M", "list(<T>),list(double)",
     "list(<T>)"},
    {"@sortByAssociatedKeys", "list_bool_sortByAssociatedKeys", "M", "list(<T>),list(bool)",
     "list(<T>)"},
    {"@sortByAssociatedKeys", "list_google.protobuf.Duration_sortByAssociatedKeys", "M",
     "list(<T>),list(google.protobuf.Duration)", "list(<T>)"},
    {"@sortByAssociatedKeys", "list_google.protobuf.Timestamp_sortByAssociatedKeys", "M",
     "list(<T>),list(google.protobuf.Timestamp)", "list(<T>)"},
    {"@sortByAssociatedKeys", "list_string_sortByAssociatedKeys", "M", "list(<T>),list(string)",
     "list(<T>)"},
    {"@sortByAssociatedKeys", "list_bytes_sortByAssociatedKeys", "M", "list(<T>),list(bytes)",
     "list(<T>)"},
    {"_!=_", "not_equals", "", "<A>,<A>", "bool"},
    {"_%_", "modulo_int64", "", "int,int", "int"},
    {"_%_", "modulo_uint64", "", "uint,uint", "uint"},
    {"_&&_", "logical_and", "N", "bool,bool", "bool"},
    {"_*_", "multiply_double", "", "double,double", "double"},
    {"_*_", "multiply_int64", "", "int,int", "int"},
    {"_*_", "multiply_uint64", "", "uint,uint", "uint"},
    {"_+_", "add_bytes", "", "bytes,bytes", "bytes"},
    {"_+_", "add_double", "", "double,double", "double"},
    {"_+_", "add_duration_duration", "", "google.protobuf.Duration,google.protobuf.Duration",
     "google.protobuf.Duration"},
    {"_+_", "add_duration_timestamp", "", "google.protobuf.Duration,google.protobuf.Timestamp",
     "google.protobuf.Timestamp"},
    {"_+_", "add_timestamp_duration", "", "google.protobuf.Timestamp,google.protobuf.Duration",
     "google.protobuf.Timestamp"},
    {"_+_", "add_int64", "", "int,int", "int"},
    {"_+_", "add_list", "", "list(<A>),list(<A>)", "list(<A>)"},
    {"_+_", "add_string", "", "string,string", "string"},
    {"_+_", "add_uint64", "", "uint,uint", "uint"},
    {"_-_", "subtract_double", "", "double,double", "double"},
    {"_-_", "subtract_duration_duration", "", "google.protobuf.Duration,google.protobuf.Duration",
     "google.protobuf.Duration"},
    {"_-_", "subtract_int64", "", "int,int", "int"},
    {"_-_", "subtract_timestamp_duration", "", "google.protobuf.Timestamp,google.protobuf.Duration",
     "google.protobuf.Timestamp"},
    {"_-_", "subtract_timestamp_timestamp", "",
     "google.protobuf.Timestamp,google.protobuf.Timestamp", "google.protobuf.Duration"},
    {"_-_", "subtract_uint64", "", "uint,uint", "uint"},
    {"_/_", "divide_double", "", "double,double", "double"},
    {"_/_", "divide_int64", "", "int,int", "int"},
    {"_/_", "divide_uint64", "", "uint,uint", "uint"},
    {"_<=_", "less_equals_bool", "", "bool,bool", "bool"},
    {"_<=_", "less_equals_int64", "", "int,int", "bool"},
    {"_<=_", "less_equals_int64_double", "", "int,double", "bool"},
    {"_<=_", "less_equals_int64_uint64", "", "int,uint", "bool"},
    {"_<=_", "less_equals_uint64", "", "uint,uint", "bool"},
    {"_<=_", "less_equals_uint64_double", "", "uint,double", "bool"},
    {"_<=_", "less_equals_uint64_int64", "", "uint,int", "bool"},
    {"_<=_", "less_equals_double", "", "double,double", "bool"},
    {"_<=_", "less_equals_double_int64", "", "double,int", "bool"},
    {"_<=_", "less_equals_double_uint64", "", "double,uint", "bool"},
    {"_<=_", "less_equals_string", "", "string,string", "bool"},
    {"_<=_", "less_equals_bytes", "", "bytes,bytes", "bool"},
    {"_<=_", "less_equals_timestamp", "", "google.protobuf.Timestamp,google.protobuf.Timestamp",
     "bool"},
    {"_<=_", "less_equals_duration", "", "google.protobuf.Duration,google.protobuf.Duration",
     "bool"},
    {"_<_", "less_bool", "", "bool,bool", "bool"},
    {"_<_", "less_int64", "", "int,int", "bool"},
    {"_<_", "less_int64_double", "", "int,double", "bool"},
    {"_<_", "less_int64_uint64", "", "int,uint", "bool"},
    {"_<_", "less_uint64", "", "uint,uint", "bool"},
    {"_<_", "less_uint64_double", "", "uint,double", "bool"},
    {"_<_", "less_uint64_int64", "", "uint,int", "bool"},
    {"_<_", "less_double", "", "double,double", "bool"},
    {"_<_", "less_double_int64", "", "double,int", "bool"},
    {"_<_", "less_double_uint64", "", "double,uint", "bool"},
    {"_<_", "less_string", "", "string,string", "bool"},
    {"_<_", "less_bytes", "", "bytes,bytes", "bool"},
    {"_<_", "less_timestamp", "", "google.protobuf.Timestamp,google.protobuf.Timestamp", "bool"},
    {"_<_", "less_duration", "", "google.protobuf.Duration,google.protobuf.Duration", "bool"},
    {"_==_", "equals", "", "<A>,<A>", "bool"},
    {"_>=_", "greater_equals_bool", "", "bool,bool", "bool"},
    {"_>=_", "greater_equals_int64", "", "int,int", "bool"},
    {"_>=_", "greater_equals_int64_double", "", "int,double", "bool"},
    {"_>=_", "greater_equals_int64_uint64", "", "int,uint", "bool"},
    {"_>=_", "greater_equals_uint64", "", "uint,uint", "bool"},
    {"_>=_", "greater_equals_uint64_double", "", "uint,double", "bool"},
    {"_>=_", "greater_equals_uint64_int64", "", "uint,int", "bool"},
    {"_>=_", "greater_equals_double", "", "double,double", "bool"},
    {"_>=_", "greater_equals_double_int64", "", "double,int", "bool"},
    {"_>=_", "greater_equals_double_uint64", "", "double,uint", "bool"},
    {"_>=_", "greater_equals_string", "", "string,string", "bool"},
    {"_>=_", "greater_equals_bytes", "", "bytes,bytes", "bool"},
    {"_>=_", "greater_equals_timestamp", "", "google.protobuf.Timestamp,google.protobuf.Timestamp",
     "bool"},
    {"_>=_", "greater_equals_duration", "", "google.protobuf.Duration,google.protobuf.Duration",
     "bool"},
    {"_>_", "greater_bool", "", "bool,bool", "bool"},
    {"_>_", "greater_int64", "", "int,int", "bool"},
    {"_>_", "greater_int64_double", "", "int,double", "bool"},
    {"_>_", "greater_int64_uint64", "", "int,uint", "bool"},
    {"_>_", "greater_uint64", "", "uint,uint", "bool"},
    {"_>_", "greater_uint64_double", "", "uint,double", "bool"},
    {"_>_", "greater_uint64_int64", "", "uint,int", "bool"},
    {"_>_", "greater_double", "", "double,double", "bool"},
    {"_>_", "greater_double_int64", "", "double,int", "bool"},
    {"_>_", "greater_double_uint64", "", "double,uint", "bool"},
    {"_>_", "greater_string", "", "string,string", "bool"},
    {"_>_", "greater_bytes", "", "bytes,bytes", "bool"},
    {"_>_", "greater_timestamp", "", "google.protobuf.Timestamp,google.protobuf.Timestamp", "bool"},
    {"_>_", "greater_duration", "", "google.protobuf.Duration,google.protobuf.Duration", "bool"},
    {"_?._", "select_optional_field", "", "dyn,string", "optional_type(<V>)"},
    {"_?_:_", "conditional", "N", "bool,<A>,<A>", "<A>"},
    {"_[?_]", "list_optindex_optional_int", "", "list(<V>),int", "optional_type(<V>)"},
    {"_[?_]", "optional_list_optindex_optional_int", "", "optional_type(list(<V>)),int",
     "optional_type(<V>)"},
    {"_[?_]", "map_optindex_optional_value", "", "map(<K>, <V>),<K>", "optional_type(<V>)"},
    {"_[?_]", "optional_map_optindex_optional_value", "", "optional_type(map(<K>, <V>)),<K>",
     "optional_type(<V>)"},
    {"_[_]", "index_list", "", "list(<A>),int", "<A>"},
    {"_[_]", "index_map", "", "map(<A>, <B>),<A>", "<B>"},
    {"_[_]", "optional_list_index_int", "", "optional_type(list(<V>)),int", "optional_type(<V>)"},
    {"_[_]", "optional_map_index_value", "", "optional_type(map(<K>, <V>)),<K>",
     "optional_type(<V>)"},
    {"_||_", "logical_or", "N", "bool,bool", "bool"},
    {"add", "quantity_add", "M", "kubernetes.Quantity,kubernetes.Quantity", "kubernetes.Quantity"},
    {"add", "quantity_add_int", "M", "kubernetes.Quantity,int", "kubernetes.Quantity"},
    {"allowed", "decision_allowed", "M", "kubernetes.authorization.Decision", "bool"},
    {"asApproximateFloat", "quantity_get_float", "M", "kubernetes.Quantity", "double"},
    {"asInteger", "quantity_get_int", "M", "kubernetes.Quantity", "int"},
    {"bool", "bool_to_bool", "", "bool", "bool"},
    {"bool", "string_to_bool", "", "string", "bool"},
    {"bytes", "bytes_to_bytes", "", "bytes", "bytes"},
    {"bytes", "string_to_bytes", "", "string", "bytes"},
    {"cel.@mapInsert", "@mapInsert_map_key_value", "", "map(<K>, <V>),<K>,<V>", "map(<K>, <V>)"},
    {"cel.@mapInsert", "@mapInsert_map_map", "", "map(<K>, <V>),map(<K>, <V>)", "map(<K>, <V>)"},
    {"charAt", "string_char_at_int", "M", "string,int", "string"},
    {"check", "pathcheck_check", "M", "kubernetes.authorization.PathCheck,string",
     "kubernetes.authorization.Decision"},
    {"check", "resourcecheck_check", "M", "kubernetes.authorization.ResourceCheck,string",
     "kubernetes.authorization.Decision"},
    {"cidr", "string_to_cidr", "", "string", "net.CIDR"},
    {"compareTo", "quantity_compare_to", "M", "kubernetes.Quantity,kubernetes.Quantity", "int"},
    {"compareTo", "semver_compare_to", "M", "kubernetes.Semver,kubernetes.Semver", "int"},
    {"contains", "contains_string", "M", "string,string", "bool"},
    {"containsCIDR", "cidr_contains_cidr_string", "M", "net.CIDR,string", "bool"},
    {"containsCIDR", "cidr_contains_cidr", "M", "net.CIDR,net.CIDR", "bool"},
    {"containsIP", "cidr_contains_ip_string", "M", "net.CIDR,string", "bool"},
    {"containsIP", "cidr_contains_ip_ip", "M", "net.CIDR,net.IP", "bool"},
    {"distinct", "list_distinct", "M", "list(<T>)", "list(<T>)"},
    {"double", "double_to_double", "", "double", "double"},
    {"double", "int64_to_double", "", "int", "double"},
    {"double", "string_to_double", "", "string", "double"},
    {"double", "uint64_to_double", "", "uint", "double"},
    {"duration", "duration_to_duration", "", "google.protobuf.Duration",
     "google.protobuf.Duration"},
    {"duration", "string_to_duration", "", "string", "google.protobuf.Duration"},
    {"dyn", "to_dyn", "", "<A>", "dyn"},
    {"endsWith", "ends_with_string", "M", "string,string", "bool"},
    {"error", "decision_error", "M", "kubernetes.authorization.Decision", "string"},
    {"errored", "decision_errored", "M", "kubernetes.authorization.Decision", "bool"},
    {"family", "ip_family", "M", "net.IP", "int"},
    {"fieldSelector", "authorizer_fieldselector", "M",
     "kubernetes.authorization.ResourceCheck,string", "kubernetes.authorization.ResourceCheck"},
    {"find", "string_find_string", "M", "string,string", "string"},
    {"findAll", "string_find_all_string", "M", "string,string", "list(string)"},
    {"findAll", "string_find_all_string_int", "M", "string,string,int", "list(string)"},
    {"first", "list_first", "M", "list(<V>)", "optional_type(<V>)"},
    {"flatten", "list_flatten", "M", "list(list(<T>))", "list(<T>)"},
    {"flatten", "list_flatten_int", "M", "list(dyn),int", "list(dyn)"},
    {"format", "string_format", "M", "string,list(dyn)", "string"},
    {"format.byte", "format.byte", "", "", "kubernetes.NamedFormat"},
    {"format.date", "format.date", "", "", "kubernetes.NamedFormat"},
    {"format.datetime", "format.datetime", "", "", "kubernetes.NamedFormat"},
    {"format.dns1035Label", "format.dns1035Label", "", "", "kubernetes.NamedFormat"},
    {"format.dns1035LabelPrefix", "format.dns1035LabelPrefix", "", "", "kubernetes.NamedFormat"},
    {"format.dns1123Label", "format.dns1123Label", "", "", "kubernetes.NamedFormat"},
    {"format.dns1123LabelPrefix", "format.dns1123LabelPrefix", "", "", "kubernetes.NamedFormat"},
    {"format.dns1123Subdomain", "format.dns1123Subdomain", "", "", "kubernetes.NamedFormat"},
    {"format.dns1123SubdomainPrefix", "format.dns1123SubdomainPrefix", "", "",
     "kubernetes.NamedFormat"},
    {"format.labelValue", "format.labelValue", "", "", "kubernetes.NamedFormat"},
    {"format.named", "format-named", "", "string", "optional_type(kubernetes.NamedFormat)"},
    {"format.qualifiedName", "format.qualifiedName", "", "", "kubernetes.NamedFormat"},
    {"format.uri", "format.uri", "", "", "kubernetes.NamedFormat"},
    {"format.uuid", "format.uuid", "", "", "kubernetes.NamedFormat"},
    {"getDate", "timestamp_to_day_of_month_1_based", "M", "google.protobuf.Timestamp", "int"},
    {"getDate", "timestamp_to_day_of_month_1_based_with_tz", "M",
     "google.protobuf.Timestamp,string", "int"},
    {"getDayOfMonth", "timestamp_to_day_of_month", "M", "google.protobuf.Timestamp", "int"},
    {"getDayOfMonth", "timestamp_to_day_of_month_with_tz", "M", "google.protobuf.Timestamp,string",
     "int"},
    {"getDayOfWeek", "timestamp_to_day_of_week", "M", "google.protobuf.Timestamp", "int"},
    {"getDayOfWeek", "timestamp_to_day_of_week_with_tz", "M", "google.protobuf.Timestamp,string",
     "int"},
    {"getDayOfYear", "timestamp_to_day_of_year", "M", "google.protobuf.Timestamp", "int"},
    {"getDayOfYear", "timestamp_to_day_of_year_with_tz", "M", "google.protobuf.Timestamp,string",
     "int"},
    {"getEscapedPath", "url_get_escaped_path", "M", "kubernetes.URL", "string"},
    {"getFullYear", "timestamp_to_year", "M", "google.protobuf.Timestamp", "int"},
    {"getFullYear", "timestamp_to_year_with_tz", "M", "google.protobuf.Timestamp,string", "int"},
    {"getHost", "url_get_host", "M", "kubernetes.URL", "string"},
    {"getHostname", "url_get_hostname", "M", "kubernetes.URL", "string"},
    {"getHours", "timestamp_to_hours", "M", "google.protobuf.Timestamp", "int"},
    {"getHours", "timestamp_to_hours_with_tz", "M", "google.protobuf.Timestamp,string", "int"},
    {"getHours", "duration_to_hours", "M", "google.protobuf.Duration", "int"},
    {"getMilliseconds", "timestamp_to_milliseconds", "M", "google.protobuf.Timestamp", "int"},
    {"getMilliseconds", "timestamp_to_milliseconds_with_tz", "M",
     "google.protobuf.Timestamp,string", "int"},
    {"getMilliseconds", "duration_to_milliseconds", "M", "google.protobuf.Duration", "int"},
    {"getMinutes", "timestamp_to_minutes", "M", "google.protobuf.Timestamp", "int"},
    {"getMinutes", "timestamp_to_minutes_with_tz", "M", "google.protobuf.Timestamp,string", "int"},
    {"getMinutes", "duration_to_minutes", "M", "google.protobuf.Duration", "int"},
    {"getMonth", "timestamp_to_month", "M", "google.protobuf.Timestamp", "int"},
    {"getMonth", "timestamp_to_month_with_tz", "M", "google.protobuf.Timestamp,string", "int"},
    {"getPort", "url_get_port", "M", "kubernetes.URL", "string"},
    {"getQuery", "url_get_query", "M", "kubernetes.URL", "map(string, list(string))"},
    {"getScheme", "url_get_scheme", "M", "kubernetes.URL", "string"},
    {"getSeconds", "timestamp_to_seconds", "M", "google.protobuf.Timestamp", "int"},
    {"getSeconds", "timestamp_to_seconds_tz", "M", "google.protobuf.Timestamp,string", "int"},
    {"getSeconds", "duration_to_seconds", "M", "google.protobuf.Duration", "int"},
    {"group", "authorizer_group", "M", "kubernetes.authorization.Authorizer,string",
     "kubernetes.authorization.GroupCheck"},
    {"hasValue", "optional_hasValue", "M", "optional_type(<V>)", "bool"},
    {"includes", "list_includes_dyn_dyn", "MS", "dyn,dyn", "bool"},
    {"indexOf", "string_index_of_string", "M", "string,string", "int"},
    {"indexOf", "string_index_of_string_int", "M", "string,string,int", "int"},
    {"indexOf", "list_a_index_of_int", "M", "list(<A>),<A>", "int"},
    {"int", "int64_to_int64", "", "int", "int"},
    {"int", "double_to_int64", "", "double", "int"},
    {"int", "duration_to_int64", "", "google.protobuf.Duration", "int"},
    {"int", "string_to_int64", "", "string", "int"},
    {"int", "timestamp_to_int64", "", "google.protobuf.Timestamp", "int"},
    {"int", "uint64_to_int64", "", "uint", "int"},
    {"ip", "string_to_ip", "", "string", "net.IP"},
    {"ip", "cidr_ip", "M", "net.CIDR", "net.IP"},
    {"ip.isCanonical", "ip_is_canonical", "", "string", "bool"},
    {"isCIDR", "is_cidr", "", "string", "bool"},
    {"isGlobalUnicast", "ip_is_global_unicast", "M", "net.IP", "bool"},
    {"isGreaterThan", "quantity_is_greater_than", "M", "kubernetes.Quantity,kubernetes.Quantity",
     "bool"},
    {"isGreaterThan", "semver_is_greater_than", "M", "kubernetes.Semver,kubernetes.Semver", "bool"},
    {"isIP", "is_ip", "", "string", "bool"},
    {"isInteger", "quantity_is_integer", "M", "kubernetes.Quantity", "bool"},
    {"isLessThan", "quantity_is_less_than", "M", "kubernetes.Quantity,kubernetes.Quantity", "bool"},
    {"isLessThan", "semver_is_less_than", "M", "kubernetes.Semver,kubernetes.Semver", "bool"},
    {"isLinkLocalMulticast", "ip_is_link_local_multicast", "M", "net.IP", "bool"},
    {"isLinkLocalUnicast", "ip_is_link_local_unicast", "M", "net.IP", "bool"},
    {"isLoopback", "ip_is_loopback", "M", "net.IP", "bool"},
    {"isQuantity", "is_quantity_string", "", "string", "bool"},
    {"isSemver", "is_semver_string", "", "string", "bool"},
    {"isSemver", "is_semver_string_bool", "", "string,bool", "bool"},
    {"isSorted", "list_int_is_sorted_bool", "M", "list(int)", "bool"},
    {"isSorted", "list_uint_is_sorted_bool", "M", "list(uint)", "bool"},
    {"isSorted", "list_double_is_sorted_bool", "M", "list(double)", "bool"},
    {"isSorted", "list_bool_is_sorted_bool", "M", "list(bool)", "bool"},
    {"isSorted", "list_duration_is_sorted_bool", "M", "list(google.protobuf.Duration)", "bool"},
    {"isSorted", "list_timestamp_is_sorted_bool", "M", "list(google.protobuf.Timestamp)", "bool"},
    {"isSorted", "list_string_is_sorted_bool", "M", "list(string)", "bool"},
    {"isSorted", "list_bytes_is_sorted_bool", "M", "list(bytes)", "bool"},
    {"isURL", "is_url_string", "", "string", "bool"},
    {"isUnspecified", "ip_is_unspecified", "M", "net.IP", "bool"},
    {"join", "list_join", "M", "list(string)", "string"},
    {"join", "list_join_string", "M", "list(string),string", "string"},
    {"labelSelector", "authorizer_labelselector", "M",
     "kubernetes.authorization.ResourceCheck,string", "kubernetes.authorization.ResourceCheck"},
    {"last", "list_last", "M", "list(<V>)", "optional_type(<V>)"},
    {"lastIndexOf", "string_last_index_of_string", "M", "string,string", "int"},
    {"lastIndexOf", "string_last_index_of_string_int", "M", "string,string,int", "int"},
    {"lastIndexOf", "list_a_last_index_of_int", "M", "list(<A>),<A>", "int"},
    {"lists.range", "lists_range", "", "int", "list(int)"},
    {"lowerAscii", "string_lower_ascii", "M", "string", "string"},
    {"major", "semver_major", "M", "kubernetes.Semver", "int"},
    {"masked", "cidr_masked", "M", "net.CIDR", "net.CIDR"},
    {"matches", "matches", "", "string,string", "bool"},
    {"matches", "matches_string", "M", "string,string", "bool"},
    {"max", "list_int_max_int", "M", "list(int)", "int"},
    {"max", "list_uint_max_uint", "M", "list(uint)", "uint"},
    {"max", "list_double_max_double", "M", "list(double)", "double"},
    {"max", "list_bool_max_bool", "M", "list(bool)", "bool"},
    {"max", "list_duration_max_duration", "M", "list(google.protobuf.Duration)",
     "google.protobuf.Duration"},
    {"max", "list_timestamp_max_timestamp", "M", "list(google.protobuf.Timestamp)",
     "google.protobuf.Timestamp"},
    {"max", "list_string_max_string", "M", "list(string)", "string"},
    {"max", "list_bytes_max_bytes", "M", "list(bytes)", "bytes"},
    {"min", "list_int_min_int", "M", "list(int)", "int"},
    {"min", "list_uint_min_uint", "M", "list(uint)", "uint"},
    {"min", "list_double_min_double", "M", "list(double)", "double"},
    {"min", "list_bool_min_bool", "M", "list(bool)", "bool"},
    {"min", "list_duration_min_duration", "M", "list(google.protobuf.Duration)",
     "google.protobuf.Duration"},
    {"min", "list_timestamp_min_timestamp", "M", "list(google.protobuf.Timestamp)",
     "google.protobuf.Timestamp"},
    {"min", "list_string_min_string", "M", "list(string)", "string"},
    {"min", "list_bytes_min_bytes", "M", "list(bytes)", "bytes"},
    {"minor", "semver_minor", "M", "kubernetes.Semver", "int"},
    {"name", "resourcecheck_name", "M", "kubernetes.authorization.ResourceCheck,string",
     "kubernetes.authorization.ResourceCheck"},
    {"namespace", "resourcecheck_namespace", "M", "kubernetes.authorization.ResourceCheck,string",
     "kubernetes.authorization.ResourceCheck"},
    {"optional.none", "optional_none", "", "", "optional_type(<V>)"},
    {"optional.of", "optional_of", "", "<V>", "optional_type(<V>)"},
    {"optional.ofNonZeroValue", "optional_ofNonZeroValue", "", "<V>", "optional_type(<V>)"},
    {"optional.unwrap", "optional_unwrap", "", "list(optional_type(<V>))", "list(<V>)"},
    {"or", "optional_or_optional", "M", "optional_type(<V>),optional_type(<V>)",
     "optional_type(<V>)"},
    {"orValue", "optional_orValue_value", "M", "optional_type(<V>),<V>", "<V>"},
    {"patch", "semver_patch", "M", "kubernetes.Semver", "int"},
    {"path", "authorizer_path", "M", "kubernetes.authorization.Authorizer,string",
     "kubernetes.authorization.PathCheck"},
    {"prefixLength", "cidr_prefix_length", "M", "net.CIDR", "int"},
    {"quantity", "string_to_quantity", "", "string", "kubernetes.Quantity"},
    {"reason", "decision_reason", "M", "kubernetes.authorization.Decision", "string"},
    {"replace", "string_replace_string_string", "M", "string,string,string", "string"},
    {"replace", "string_replace_string_string_int", "M", "string,string,string,int", "string"},
    {"resource", "groupcheck_resource", "M", "kubernetes.authorization.GroupCheck,string",
     "kubernetes.authorization.ResourceCheck"},
    {"reverse", "list_reverse", "M", "list(<T>)", "list(<T>)"},
    {"semver", "string_to_semver", "", "string", "kubernetes.Semver"},
    {"semver", "string_bool_to_semver", "", "string,bool", "kubernetes.Semver"},
    {"serviceAccount", "authorizer_serviceaccount", "M",
     "kubernetes.authorization.Authorizer,string,string", "kubernetes.authorization.Authorizer"},
    {"sets.contains", "list_sets_contains_list", "", "list(<T>),list(<T>)", "bool"},
    {"sets.equivalent", "list_sets_equivalent_list", "", "list(<T>),list(<T>)", "bool"},
    {"sets.intersects", "list_sets_intersects_list", "", "list(<T>),list(<T>)", "bool"},
    {"sign", "quantity_sign", "", "kubernetes.Quantity", "int"},
    {"size", "size_bytes", "", "bytes", "int"},
    {"size", "bytes_size", "M", "bytes", "int"},
    {"size", "size_list", "", "list(<A>)", "int"},
    {"size", "list_size", "M", "list(<A>)", "int"},
    {"size", "size_map", "", "map(<A>, <B>)", "int"},
    {"size", "map_size", "M", "map(<A>, <B>)", "int"},
    {"size", "size_string", "", "string", "int"},
    {"size", "string_size", "M", "string", "int"},
    {"slice", "list_slice", "M", "list(<T>),int,int", "list(<T>)"},
    {"sort", "list_int_sort", "M", "list(int)", "list(int)"},
    {"sort", "list_uint_sort", "M", "list(uint)", "list(uint)"},
    {"sort", "list_double_sort", "M", "list(double)", "list(double)"},
    {"sort", "list_bool_sort", "M", "list(bool)", "list(bool)"},
    {"sort", "list_google.protobuf.Duration_sort", "M", "list(google.protobuf.Duration)",
     "list(google.protobuf.Duration)"},
    {"sort", "list_google.protobuf.Timestamp_sort", "M", "list(google.protobuf.Timestamp)",
     "list(google.protobuf.Timestamp)"},
    {"sort", "list_string_sort", "M", "list(string)", "list(string)"},
    {"sort", "list_bytes_sort", "M", "list(bytes)", "list(bytes)"},
    {"split", "string_split_string", "M", "string,string", "list(string)"},
    {"split", "string_split_string_int", "M", "string,string,int", "list(string)"},
    {"startsWith", "starts_with_string", "M", "string,string", "bool"},
    {"string", "string_to_string", "", "string", "string"},
    {"string", "bool_to_string", "", "bool", "string"},
    {"string", "bytes_to_string", "", "bytes", "string"},
    {"string", "double_to_string", "", "double", "string"},
    {"string", "duration_to_string", "", "google.protobuf.Duration", "string"},
    {"string", "int64_to_string", "", "int", "string"},
    {"string", "timestamp_to_string", "", "google.protobuf.Timestamp", "string"},
    {"string", "uint64_to_string", "", "uint", "string"},
    {"string", "ip_to_string", "", "net.IP", "string"},
    {"string", "cidr_to_string", "", "net.CIDR", "string"},
    {"strings.quote", "strings_quote", "", "string", "string"},
    {"sub", "quantity_sub", "M", "kubernetes.Quantity,kubernetes.Quantity", "kubernetes.Quantity"},
    {"sub", "quantity_sub_int", "M", "kubernetes.Quantity,int", "kubernetes.Quantity"},
    {"subresource", "resourcecheck_subresource", "M",
     "kubernetes.authorization.ResourceCheck,string", "kubernetes.authorization.ResourceCheck"},
    {"substring", "string_substring_int", "M", "string,int", "string"},
    {"substring", "string_substring_int_int", "M", "string,int,int", "string"},
    {"sum", "list_int_sum_int", "M", "list(int)", "int"},
    {"sum", "list_uint_sum_uint", "M", "list(uint)", "uint"},
    {"sum", "list_double_sum_double", "M", "list(double)", "double"},
    {"sum", "list_duration_sum_duration", "M", "list(google.protobuf.Duration)",
     "google.protobuf.Duration"},
    {"timestamp", "timestamp_to_timestamp", "", "google.protobuf.Timestamp",
     "google.protobuf.Timestamp"},
    {"timestamp", "int64_to_timestamp", "", "int", "google.protobuf.Timestamp"},
    {"timestamp", "string_to_timestamp", "", "string", "google.protobuf.Timestamp"},
    {"trim", "string_trim", "M", "string", "string"},
    {"type", "type", "", "<A>", "type(<A>)"},
    {"uint", "uint64_to_uint64", "", "uint", "uint"},
    {"uint", "double_to_uint64", "", "double", "uint"},
    {"uint", "int64_to_uint64", "", "int", "uint"},
    {"uint", "string_to_uint64", "", "string", "uint"},
    {"unwrapOpt", "optional_unwrapOpt", "M", "list(optional_type(<V>))", "list(<V>)"},
    {"upperAscii", "string_upper_ascii", "M", "string", "string"},
    {"url", "string_to_url", "", "string", "kubernetes.URL"},
    {"validate", "format-validate", "M", "kubernetes.NamedFormat,string",
     "optional_type(list(string))"},
    {"value", "optional_value", "M", "optional_type(<V>)", "<V>"},
};

/* ---- types named in the table ---- */

static struct arena env_arena = ARENA_INIT;

static const struct cel_type *mk(enum cel_kind k, const char *name, int np,
                                 const struct cel_type *p0, const struct cel_type *p1)
{
    struct cel_type *t = arena_alloc(&env_arena, sizeof(*t));
    if (!t)
        return &cel_t_dyn;
    t->kind = k;
    t->name = name;
    t->np = np;
    t->p[0] = p0;
    t->p[1] = p1;
    return t;
}

static const struct cel_type *parse_type(const char **sp)
{
    const char *s = *sp, *start;
    size_t n;
    char *name;

    while (*s == ' ')
        s++;
    if (*s == '<') {
        start = ++s;
        while (*s && *s != '>')
            s++;
        name = arena_strndup(&env_arena, start, (size_t)(s - start));
        if (*s)
            s++;
        *sp = s;
        return mk(CK_TYPEPARAM, name ? name : "T", 0, NULL, NULL);
    }
    start = s;
    while (*s && *s != '(' && *s != ',' && *s != ')')
        s++;
    n = (size_t)(s - start);
    name = arena_strndup(&env_arena, start, n);
    if (!name)
        name = "dyn";
    if (*s == '(') {
        const struct cel_type *p0, *p1 = NULL;
        int np = 1;
        s++;
        p0 = parse_type(&s);
        if (*s == ',') {
            s++;
            p1 = parse_type(&s);
            np = 2;
        }
        if (*s == ')')
            s++;
        *sp = s;
        if (!strcmp(name, "list"))
            return mk(CK_LIST, "list", 1, p0, NULL);
        if (!strcmp(name, "map"))
            return mk(CK_MAP, "map", 2, p0, p1);
        if (!strcmp(name, "type"))
            return mk(CK_TYPE, "type", 1, p0, NULL);
        return mk(CK_OPAQUE, name, np, p0, p1);
    }
    *sp = s;
    if (!strcmp(name, "int"))
        return &cel_t_int;
    if (!strcmp(name, "uint"))
        return &cel_t_uint;
    if (!strcmp(name, "double"))
        return &cel_t_double;
    if (!strcmp(name, "bool"))
        return &cel_t_bool;
    if (!strcmp(name, "string"))
        return &cel_t_string;
    if (!strcmp(name, "bytes"))
        return &cel_t_bytes;
    if (!strcmp(name, "dyn"))
        return &cel_t_dyn;
    if (!strcmp(name, "null_type"))
        return &cel_t_null;
    if (!strcmp(name, "google.protobuf.Duration"))
        return &cel_t_duration;
    if (!strcmp(name, "google.protobuf.Timestamp"))
        return &cel_t_timestamp;
    if (!strcmp(name, "net.IP"))
        return &cel_t_ip;
    if (!strcmp(name, "net.CIDR"))
        return &cel_t_cidr;
    return mk(CK_STRUCT, name, 0, NULL, NULL);
}

/* cel_test_type: the conformance lines' type names (celtest.h) */
const struct cel_type *cel_test_type(const char *text)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    const struct cel_type *t;
    char buf[256];
    size_t o = 0;

    /* the short names the lines use for the well-known types */
    for (const char *s = text; *s && o + 32 < sizeof(buf);) {
        if (!strncmp(s, "timestamp", 9) && !(s[9] >= 'a' && s[9] <= 'z')) {
            o += (size_t)snprintf(buf + o, sizeof(buf) - o, "google.protobuf.Timestamp");
            s += 9;
        } else if (!strncmp(s, "duration", 8) && !(s[8] >= 'a' && s[8] <= 'z')) {
            o += (size_t)snprintf(buf + o, sizeof(buf) - o, "google.protobuf.Duration");
            s += 8;
        } else {
            buf[o++] = *s++;
        }
    }
    buf[o] = 0;
    if (!strcmp(buf, "type"))
        snprintf(buf, sizeof(buf), "type(dyn)");
    pthread_mutex_lock(&mu);
    {
        const char *s = buf;
        t = parse_type(&s);
        if (*s)
            t = NULL;
    }
    pthread_mutex_unlock(&mu);
    if (t && t->kind == CK_STRUCT)
        return NULL; /* no message types here */
    return t;
}

static struct cel_env envs[2];
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static int env_status;

static struct cel_field device_fields[2][4];

static int build_env(struct cel_env *env, bool stored)
{
    size_t nrows = sizeof(decl_rows) / sizeof(decl_rows[0]);
    struct cel_function *fns = arena_alloc(&env_arena, nrows * sizeof(*fns));
    struct cel_overload *ovs = arena_alloc(&env_arena, nrows * sizeof(*ovs));
    int nf = 0, no = 0;
    const struct cel_type *attr = stored ? &cel_t_dyn : &cel_t_any;
    struct cel_field *f = device_fields[stored ? 0 : 1];

    if (!fns || !ovs)
        return -ENOMEM;
    for (size_t i = 0; i < nrows; i++) {
        const struct decl_row *r = &decl_rows[i];
        struct cel_overload *o;
        const char *s;
        if (strchr(r->flags, 'S') && !stored)
            continue;
        if (nf == 0 || strcmp(fns[nf - 1].name, r->name)) {
            fns[nf].name = r->name;
            fns[nf].ov = &ovs[no];
            fns[nf].n = 0;
            nf++;
        }
        o = &ovs[no++];
        fns[nf - 1].n++;
        o->id = r->id;
        o->member = strchr(r->flags, 'M') != NULL;
        o->nonstrict = strchr(r->flags, 'N') != NULL;
        s = r->args;
        while (*s && o->nargs < 4) {
            o->args[o->nargs++] = parse_type(&s);
            while (*s == ',' || *s == ' ')
                s++;
        }
        s = r->result;
        o->result = parse_type(&s);
    }
    if (!stored) {
        /* library.Lists v0 declares indexOf/lastIndexOf before the strings extension does */
        for (int i = 0; i < nf; i++) {
            if (strcmp(fns[i].name, "indexOf") && strcmp(fns[i].name, "lastIndexOf"))
                continue;
            {
                struct cel_overload *v = (struct cel_overload *)fns[i].ov, last = v[fns[i].n - 1];
                memmove(v + 1, v, (size_t)(fns[i].n - 1) * sizeof(*v));
                v[0] = last;
            }
        }
    }
    env->fns = fns;
    env->nfns = nf;
    env->var_name = "device";
    env->var_type = mk(CK_STRUCT, "kubernetes.DRADevice", 0, NULL, NULL);
    f[0].name = "allowMultipleAllocations";
    f[0].type = &cel_t_bool;
    f[1].name = "driver";
    f[1].type = &cel_t_string;
    f[2].name = "attributes";
    f[2].type = mk(CK_MAP, "map", 2, &cel_t_string, mk(CK_MAP, "map", 2, &cel_t_string, attr));
    f[3].name = "capacity";
    f[3].type =
        mk(CK_MAP, "map", 2, &cel_t_string, mk(CK_MAP, "map", 2, &cel_t_string, &cel_t_quantity));
    env->fields = f;
    env->nfields = 4;
    env->attr_type = attr;
    env->cross_type_numeric = true;
    env->homogeneous_literals = false; /* the checker joins to dyn; a validator objects */
    env->parse.optional_syntax = true;
    env->parse.bindings = true;
    env->parse.two_var = true;
    env->parse.lists_sort_by = true;
    env->parse.opt_macros = true;
    return 0;
}

static void init_envs(void)
{
    env_status = build_env(&envs[0], true);
    if (!env_status)
        env_status = build_env(&envs[1], false);
}

const struct cel_env *cel_dra_env(bool stored)
{
    pthread_once(&env_once, init_envs);
    if (env_status)
        return NULL;
    return &envs[stored ? 0 : 1];
}
