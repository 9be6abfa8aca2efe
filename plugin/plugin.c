// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The babeltrace2 plugin `ftraced`: its descriptors only. The component
 * class's methods live in bt-source.c and bt-iter.c, so a program can build
 * the same class without loading the plugin (tests/fuzz/fuzz-bt2-source.c).
 */
#include <babeltrace2/babeltrace.h>

#include "plugin/bt-iter.h"
#include "plugin/bt-source.h"

BT_PLUGIN_MODULE();

BT_PLUGIN(ftraced);
BT_PLUGIN_DESCRIPTION("Reads trace-cmd v7 files (ftraced's and trace-cmd's)");
BT_PLUGIN_AUTHOR("ftraced authors");
BT_PLUGIN_LICENSE("GPL-2.0-or-later");

BT_PLUGIN_SOURCE_COMPONENT_CLASS(tracecmd, tc_iter_next);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_DESCRIPTION(tracecmd,
	"Read a trace-cmd v7 file (trace.dat): one stream per CPU, events decoded with the "
	"file's own formats");
BT_PLUGIN_SOURCE_COMPONENT_CLASS_INITIALIZE_METHOD(tracecmd, tc_source_init);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_FINALIZE_METHOD(tracecmd, tc_source_finalize);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_QUERY_METHOD(tracecmd, tc_source_query);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD(tracecmd, tc_iter_init);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_MESSAGE_ITERATOR_CLASS_FINALIZE_METHOD(tracecmd,
									tc_iter_finalize);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_MESSAGE_ITERATOR_CLASS_SEEK_BEGINNING_METHODS(tracecmd,
	tc_iter_seek_beginning, tc_iter_can_seek_beginning);
