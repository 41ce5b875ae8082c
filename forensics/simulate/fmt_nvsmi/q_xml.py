"""``nvidia-smi -q -x``: one XML document (nvsmi_device_v12)."""
from __future__ import annotations

import numpy as np

from forensics.simulate import textfmt as tf
from forensics.simulate.config import CUDA, DRIVER
from forensics.simulate.fmt_nvsmi.common import T_LIMIT, gpu_process, reason_state
from forensics.simulate.series import (MEM_CLOCK, MEM_TOTAL, P_LIMIT, R_APP, R_HW_BRAKE, R_HW_SLOW, R_HW_THERMAL,
                                       R_IDLE, R_SW_POWER, R_SW_THERMAL, R_SYNC)


def q_xml(host, hm, t: float) -> bytes:
    times = np.array([t])
    s = hm.gpu(times, 1.0, "x")
    stamp = tf.times(host.wall(times), host.tz, "%a %b %e %H:%M:%S %Y")[0]
    parts = ['<?xml version="1.0" ?>', '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">', "<nvidia_smi_log>",
             f"\t<timestamp>{stamp}</timestamp>", f"\t<driver_version>{DRIVER}</driver_version>",
             f"\t<cuda_version>{CUDA}</cuda_version>", f"\t<attached_gpus>{len(host.gpus)}</attached_gpus>"]
    clocks = [f"\t\t\t\t<supported_graphics_clock>{c} MHz</supported_graphics_clock>" for c in range(1980, 344, -15)]
    for g, gpu in enumerate(host.gpus):
        ecc = hm.ecc(g, times)
        bits = int(s["reasons"][g][0])
        used = int(s["mem_used"][g][0])
        p = gpu_process(host, hm, g, 0, s)
        if p is None:
            procs = "\t\t<processes>\n\t\t</processes>"
        else:
            procs = ("\t\t<processes>\n\t\t\t<process_info>\n\t\t\t\t<gpu_instance_id>N/A</gpu_instance_id>\n"
                     "\t\t\t\t<compute_instance_id>N/A</compute_instance_id>\n"
                     f"\t\t\t\t<pid>{p[0]}</pid>\n\t\t\t\t<type>C</type>\n\t\t\t\t<process_name>{p[1]}</process_name>\n"
                     f"\t\t\t\t<used_memory>{p[2]} MiB</used_memory>\n\t\t\t</process_info>\n\t\t</processes>")

        def rs(flag):
            return reason_state(bits, flag)
        temp = int(s["temp"][g][0])
        parts.append(f"""	<gpu id="{gpu.pci}">
		<product_name>NVIDIA H100 80GB HBM3</product_name>
		<product_brand>NVIDIA</product_brand>
		<product_architecture>Hopper</product_architecture>
		<display_mode>Enabled</display_mode>
		<display_active>Disabled</display_active>
		<persistence_mode>{'Disabled' if (hm.h, g) in hm.plan.persistence_off else 'Enabled'}</persistence_mode>
		<addressing_mode>None</addressing_mode>
		<mig_mode>
			<current_mig>Disabled</current_mig>
			<pending_mig>Disabled</pending_mig>
		</mig_mode>
		<mig_devices>
			None
		</mig_devices>
		<accounting_mode>Disabled</accounting_mode>
		<accounting_mode_buffer_size>4000</accounting_mode_buffer_size>
		<driver_model>
			<current_dm>N/A</current_dm>
			<pending_dm>N/A</pending_dm>
		</driver_model>
		<serial>{gpu.serial}</serial>
		<uuid>{gpu.uuid}</uuid>
		<minor_number>{gpu.index}</minor_number>
		<vbios_version>96.00.74.00.0D</vbios_version>
		<multigpu_board>No</multigpu_board>
		<board_id>0x{gpu.bus:x}00</board_id>
		<board_part_number>692-2G520-0200-000</board_part_number>
		<gpu_part_number>2330-885-A1</gpu_part_number>
		<gpu_fru_part_number>N/A</gpu_fru_part_number>
		<gpu_module_id>{gpu.module_id}</gpu_module_id>
		<inforom_version>
			<img_version>G520.0200.00.05</img_version>
			<oem_object>2.1</oem_object>
			<ecc_object>7.16</ecc_object>
			<pwr_object>N/A</pwr_object>
		</inforom_version>
		<gpu_operation_mode>
			<current_gom>N/A</current_gom>
			<pending_gom>N/A</pending_gom>
		</gpu_operation_mode>
		<gsp_firmware_version>N/A</gsp_firmware_version>
		<gpu_virtualization_mode>
			<virtualization_mode>None</virtualization_mode>
			<host_vgpu_mode>N/A</host_vgpu_mode>
		</gpu_virtualization_mode>
		<gpu_reset_status>
			<reset_required>No</reset_required>
			<drain_and_reset_recommended>No</drain_and_reset_recommended>
		</gpu_reset_status>
		<ibmnpu>
			<relaxed_ordering_mode>N/A</relaxed_ordering_mode>
		</ibmnpu>
		<pci>
			<pci_bus>{gpu.bus:02X}</pci_bus>
			<pci_device>00</pci_device>
			<pci_domain>0000</pci_domain>
			<pci_device_id>233010DE</pci_device_id>
			<pci_bus_id>{gpu.pci}</pci_bus_id>
			<pci_sub_system_id>16C110DE</pci_sub_system_id>
			<pci_gpu_link_info>
				<pcie_gen>
					<max_link_gen>5</max_link_gen>
					<current_link_gen>5</current_link_gen>
					<device_current_link_gen>5</device_current_link_gen>
					<max_device_link_gen>5</max_device_link_gen>
					<max_host_link_gen>5</max_host_link_gen>
				</pcie_gen>
				<link_widths>
					<max_link_width>16x</max_link_width>
					<current_link_width>16x</current_link_width>
				</link_widths>
			</pci_gpu_link_info>
			<pci_bridge_chip>
				<bridge_chip_type>N/A</bridge_chip_type>
				<bridge_chip_fw>N/A</bridge_chip_fw>
			</pci_bridge_chip>
			<replay_counter>0</replay_counter>
			<replay_rollover_counter>0</replay_rollover_counter>
			<tx_util>{int(s["pcie_tx"][g][0])} KB/s</tx_util>
			<rx_util>{int(s["pcie_rx"][g][0])} KB/s</rx_util>
			<atomic_caps_inbound>N/A</atomic_caps_inbound>
			<atomic_caps_outbound>FETCHADD_32 FETCHADD_64 SWAP_32 SWAP_64 CAS_32 CAS_64 </atomic_caps_outbound>
		</pci>
		<fan_speed>N/A</fan_speed>
		<performance_state>P0</performance_state>
		<clocks_event_reasons>
			<clocks_event_reason_gpu_idle>{rs(R_IDLE)}</clocks_event_reason_gpu_idle>
			<clocks_event_reason_applications_clocks_setting>{rs(R_APP)}</clocks_event_reason_applications_clocks_setting>
			<clocks_event_reason_sw_power_cap>{rs(R_SW_POWER)}</clocks_event_reason_sw_power_cap>
			<clocks_event_reason_hw_slowdown>{rs(R_HW_SLOW)}</clocks_event_reason_hw_slowdown>
			<clocks_event_reason_hw_thermal_slowdown>{rs(R_HW_THERMAL)}</clocks_event_reason_hw_thermal_slowdown>
			<clocks_event_reason_hw_power_brake_slowdown>{rs(R_HW_BRAKE)}</clocks_event_reason_hw_power_brake_slowdown>
			<clocks_event_reason_sync_boost>{rs(R_SYNC)}</clocks_event_reason_sync_boost>
			<clocks_event_reason_sw_thermal_slowdown>{rs(R_SW_THERMAL)}</clocks_event_reason_sw_thermal_slowdown>
			<clocks_event_reason_display_clocks_setting>Not Active</clocks_event_reason_display_clocks_setting>
		</clocks_event_reasons>
		<fb_memory_usage>
			<total>{MEM_TOTAL} MiB</total>
			<reserved>328 MiB</reserved>
			<used>{used} MiB</used>
			<free>{MEM_TOTAL - 328 - used} MiB</free>
		</fb_memory_usage>
		<bar1_memory_usage>
			<total>131072 MiB</total>
			<used>1 MiB</used>
			<free>131071 MiB</free>
		</bar1_memory_usage>
		<cc_protected_memory_usage>
			<total>0 MiB</total>
			<used>0 MiB</used>
			<free>0 MiB</free>
		</cc_protected_memory_usage>
		<compute_mode>Default</compute_mode>
		<utilization>
			<gpu_util>{int(s["util"][g][0])} %</gpu_util>
			<memory_util>{int(s["mem_util"][g][0])} %</memory_util>
			<encoder_util>0 %</encoder_util>
			<decoder_util>0 %</decoder_util>
			<jpeg_util>0 %</jpeg_util>
			<ofa_util>0 %</ofa_util>
		</utilization>
		<encoder_stats>
			<session_count>0</session_count>
			<average_fps>0</average_fps>
			<average_latency>0</average_latency>
		</encoder_stats>
		<fbc_stats>
			<session_count>0</session_count>
			<average_fps>0</average_fps>
			<average_latency>0</average_latency>
		</fbc_stats>
		<ecc_mode>
			<current_ecc>Enabled</current_ecc>
			<pending_ecc>Enabled</pending_ecc>
		</ecc_mode>
		<ecc_errors>
			<volatile>
				<sram_correctable>0</sram_correctable>
				<sram_uncorrectable>0</sram_uncorrectable>
				<dram_correctable>{int(ecc["sbe"][0])}</dram_correctable>
				<dram_uncorrectable>{int(ecc["dbe"][0])}</dram_uncorrectable>
			</volatile>
			<aggregate>
				<sram_correctable>0</sram_correctable>
				<sram_uncorrectable>0</sram_uncorrectable>
				<dram_correctable>{int(ecc["sbe"][0]) + int(ecc["sbe_agg"][0])}</dram_correctable>
				<dram_uncorrectable>{int(ecc["dbe"][0])}</dram_uncorrectable>
			</aggregate>
		</ecc_errors>
		<retired_pages>
			<multiple_single_bit_retirement>
				<retired_count>N/A</retired_count>
				<retired_pagelist>N/A</retired_pagelist>
			</multiple_single_bit_retirement>
			<double_bit_retirement>
				<retired_count>N/A</retired_count>
				<retired_pagelist>N/A</retired_pagelist>
			</double_bit_retirement>
			<pending_blacklist>N/A</pending_blacklist>
			<pending_retirement>N/A</pending_retirement>
		</retired_pages>
		<remapped_rows>
			<remapped_row_corr>0</remapped_row_corr>
			<remapped_row_unc>{int(ecc["remap_unc"][0])}</remapped_row_unc>
			<remapped_row_pending>{"Yes" if ecc["pending"][0] else "No"}</remapped_row_pending>
			<remapped_row_failure>{"Yes" if ecc["failure"][0] else "No"}</remapped_row_failure>
			<row_remapper_histogram>
				<row_remapper_histogram_max>2560 bank(s)</row_remapper_histogram_max>
				<row_remapper_histogram_high>0 bank(s)</row_remapper_histogram_high>
				<row_remapper_histogram_partial>0 bank(s)</row_remapper_histogram_partial>
				<row_remapper_histogram_low>0 bank(s)</row_remapper_histogram_low>
				<row_remapper_histogram_none>0 bank(s)</row_remapper_histogram_none>
			</row_remapper_histogram>
		</remapped_rows>
		<temperature>
			<gpu_temp>{temp} C</gpu_temp>
			<gpu_temp_tlimit>{T_LIMIT - temp} C</gpu_temp_tlimit>
			<gpu_temp_max_tlimit_threshold>-8 C</gpu_temp_max_tlimit_threshold>
			<gpu_temp_slow_tlimit_threshold>-2 C</gpu_temp_slow_tlimit_threshold>
			<gpu_temp_max_gpu_tlimit_threshold>0 C</gpu_temp_max_gpu_tlimit_threshold>
			<gpu_target_temperature>N/A</gpu_target_temperature>
			<memory_temp>{int(s["mem_temp"][g][0])} C</memory_temp>
			<gpu_temp_max_mem_tlimit_threshold>0 C</gpu_temp_max_mem_tlimit_threshold>
		</temperature>
		<supported_gpu_target_temp>
			<gpu_target_temp_min>N/A</gpu_target_temp_min>
			<gpu_target_temp_max>N/A</gpu_target_temp_max>
		</supported_gpu_target_temp>
		<gpu_power_readings>
			<power_state>P0</power_state>
			<power_draw>{s["power"][g][0]:.2f} W</power_draw>
			<current_power_limit>{P_LIMIT:.2f} W</current_power_limit>
			<requested_power_limit>{P_LIMIT:.2f} W</requested_power_limit>
			<default_power_limit>{P_LIMIT:.2f} W</default_power_limit>
			<min_power_limit>200.00 W</min_power_limit>
			<max_power_limit>{P_LIMIT:.2f} W</max_power_limit>
		</gpu_power_readings>
		<module_power_readings>
			<power_state>P0</power_state>
			<power_draw>N/A</power_draw>
			<current_power_limit>N/A</current_power_limit>
			<requested_power_limit>N/A</requested_power_limit>
			<default_power_limit>N/A</default_power_limit>
			<min_power_limit>N/A</min_power_limit>
			<max_power_limit>N/A</max_power_limit>
		</module_power_readings>
		<clocks>
			<graphics_clock>{int(s["sm"][g][0])} MHz</graphics_clock>
			<sm_clock>{int(s["sm"][g][0])} MHz</sm_clock>
			<mem_clock>{MEM_CLOCK} MHz</mem_clock>
			<video_clock>{int(s["video"][g][0])} MHz</video_clock>
		</clocks>
		<applications_clocks>
			<graphics_clock>1980 MHz</graphics_clock>
			<mem_clock>2619 MHz</mem_clock>
		</applications_clocks>
		<default_applications_clocks>
			<graphics_clock>1980 MHz</graphics_clock>
			<mem_clock>2619 MHz</mem_clock>
		</default_applications_clocks>
		<deferred_clocks>
			<mem_clock>N/A</mem_clock>
		</deferred_clocks>
		<max_clocks>
			<graphics_clock>1980 MHz</graphics_clock>
			<sm_clock>1980 MHz</sm_clock>
			<mem_clock>2619 MHz</mem_clock>
			<video_clock>1545 MHz</video_clock>
		</max_clocks>
		<max_customer_boost_clocks>
			<graphics_clock>1980 MHz</graphics_clock>
		</max_customer_boost_clocks>
		<clock_policy>
			<auto_boost>N/A</auto_boost>
			<auto_boost_default>N/A</auto_boost_default>
		</clock_policy>
		<voltage>
			<graphics_volt>670.000 mV</graphics_volt>
		</voltage>
		<fabric>
			<state>Completed</state>
			<status>Success</status>
		</fabric>
		<supported_clocks>
			<supported_mem_clock>
				<value>2619 MHz</value>
{chr(10).join(clocks)}
			</supported_mem_clock>
		</supported_clocks>
{procs}
		<accounted_processes>
		</accounted_processes>
	</gpu>
""")
    parts.append("</nvidia_smi_log>")
    return ("\n".join(parts) + "\n").encode()
